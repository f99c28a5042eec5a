//===- MixPrimitiveOps.td - The primitive ops of mix -------*- tablegen -*-===//
//
// The small set of primitive ops that the model-level ops decompose into:
// what autodiff differentiates and what the lowering to linalg handles.
//
//===----------------------------------------------------------------------===//

#ifndef MIX_DIALECT_MIX_IR_MIXPRIMITIVEOPS_TD
#define MIX_DIALECT_MIX_IR_MIXPRIMITIVEOPS_TD

// Included from MixOps.td, after the types and base classes.

def Mix_DivOp : Mix_BinaryOp<"div", "lhs / rhs", [Mix_Differentiable]>;
def Mix_MaxOp : Mix_BinaryOp<"max", "max(lhs, rhs)", [Mix_Differentiable]>;

def Mix_ExpOp : Mix_UnaryOp<"exp", "exp(u)",
    [Mix_Differentiable]>;
def Mix_LogOp : Mix_UnaryOp<"log", "log(u)",
    [Mix_Differentiable]>;
def Mix_NegOp : Mix_UnaryOp<"neg", "-u",
    [Mix_Differentiable]>;
def Mix_RsqrtOp : Mix_UnaryOp<"rsqrt", "1 / sqrt(u)",
    [Mix_Differentiable]>;
def Mix_SqrtOp : Mix_UnaryOp<"sqrt", "sqrt(u)",
    [Mix_Differentiable]>;
def Mix_StepOp : Mix_UnaryOp<"step", "u > 0 ? 1 : 0",
    [Mix_Differentiable]>;
def Mix_StopGradientOp : Mix_UnaryOp<"stop_gradient",
    "u (the value; autodiff treats it as a constant)", [Mix_Differentiable]>;

class Mix_ReduceOp<string mnemonic, string what, list<Trait> traits = []>
    : Mix_Op<mnemonic, !listconcat([Pure], traits)> {
  let summary = what # " over the given dimensions, keeping them as size 1";
  let description = [{
    Reduces the input over `dims`; the result has the input's rank with the
    reduced dimensions of size 1, so it broadcasts back against the input.

    Example:
    ```mlir
    %s = mix.}] # mnemonic # [{ %x dims [2] : tensor<2x8x16xf32> -> tensor<2x8x1xf32>
    ```
  }];
  let arguments = (ins Mix_FloatTensor:$input, DenseI64ArrayAttr:$dims);
  let results = (outs Mix_FloatTensor:$result);
  let assemblyFormat = [{
    $input `dims` $dims attr-dict `:` type($input) `->` type($result)
  }];
  let hasVerifier = 1;
}

def Mix_ReduceSumOp : Mix_ReduceOp<"reduce_sum", "sum", [Mix_Differentiable]>;
def Mix_ReduceMaxOp : Mix_ReduceOp<"reduce_max", "maximum">;

def Mix_BroadcastOp : Mix_Op<"broadcast", [Pure, Mix_Differentiable]> {
  let summary = "broadcast size-1 dimensions to the result's sizes";
  let description = [{
    The result has the input's rank; each input dimension equals the
    result's or is 1.

    Example:
    ```mlir
    %b = mix.broadcast %x : tensor<2x1x16xf32> -> tensor<2x8x16xf32>
    ```
  }];
  let arguments = (ins Mix_FloatTensor:$input);
  let results = (outs Mix_FloatTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
  let hasVerifier = 1;
}

def Mix_MatmulOp : Mix_Op<"matmul", [Pure, Mix_Differentiable]> {
  let summary = "batched matrix product with optional transposes";
  let description = [{
    `result[..., i, j] = sum_k A[..., i, k] B[..., k, j]`, where `A` is `lhs`
    or, with `transpose_lhs`, `lhs` with its last two dimensions swapped (and
    likewise `B`). Leading (batch) dimensions are equal on both sides.

    Example:
    ```mlir
    %c = mix.matmul %a, %b transpose_rhs : (tensor<16x64xf32>, tensor<256x64xf32>) -> tensor<16x256xf32>
    ```
  }];
  let arguments = (ins Mix_FloatTensor:$lhs, Mix_FloatTensor:$rhs,
                       UnitAttr:$transpose_lhs, UnitAttr:$transpose_rhs);
  let results = (outs Mix_FloatTensor:$result);
  let assemblyFormat = [{
    $lhs `,` $rhs (`transpose_lhs` $transpose_lhs^)?
    (`transpose_rhs` $transpose_rhs^)? attr-dict
    `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def Mix_TransposeOp : Mix_Op<"transpose", [Pure, Mix_Differentiable]> {
  let summary = "permute dimensions";
  let description = [{
    `result[i_perm[0], ...] = input[i_0, ...]`: result dimension `r` is input
    dimension `permutation[r]`.

    Example:
    ```mlir
    %t = mix.transpose %x [0, 2, 1, 3] : tensor<2x8x4x16xf32> -> tensor<2x4x8x16xf32>
    ```
  }];
  let arguments = (ins Mix_FloatTensor:$input,
                       DenseI64ArrayAttr:$permutation);
  let results = (outs Mix_FloatTensor:$result);
  let assemblyFormat = [{
    $input $permutation attr-dict `:` type($input) `->` type($result)
  }];
  let hasVerifier = 1;
}

def Mix_ReshapeOp : Mix_Op<"reshape", [Pure, Mix_Differentiable]> {
  let summary = "reinterpret the row-major elements with a new shape";
  let description = [{
    Example:
    ```mlir
    %r = mix.reshape %x : tensor<2x8x16xf32> -> tensor<16x16xf32>
    ```
  }];
  let arguments = (ins Mix_FloatTensor:$input);
  let results = (outs Mix_FloatTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
  let hasVerifier = 1;
  let hasFolder = 1;
}

def Mix_SliceOp : Mix_Op<"slice", [Pure, Mix_Differentiable]> {
  let summary = "a contiguous range of one dimension";
  let description = [{
    Elements `[offset, offset + size)` of dimension `dim`; the result's size
    along `dim` is `size`.

    Example:
    ```mlir
    %s = mix.slice %x dim 2 offset 16 : tensor<2x8x48xf32> -> tensor<2x8x16xf32>
    ```
  }];
  let arguments = (ins Mix_FloatTensor:$input,
                       ConfinedAttr<I64Attr, [IntNonNegative]>:$dim,
                       ConfinedAttr<I64Attr, [IntNonNegative]>:$offset);
  let results = (outs Mix_FloatTensor:$result);
  let assemblyFormat = [{
    $input `dim` $dim `offset` $offset attr-dict `:` type($input) `->` type($result)
  }];
  let hasVerifier = 1;
}

def Mix_DynamicSliceOp : Mix_Op<"dynamic_slice", [Pure]> {
  let summary = "a range of one dimension at a run-time offset";
  let description = [{
    Elements `[offset, offset + n)` of dimension `dim`, where `n` is the
    result's size along `dim` and `offset` the value of the 0-d `offset`
    operand: a decode step's row of a position table. An offset outside
    `[0, size - n]` is undefined behaviour here; the runtime checks the
    positions it passes. Not differentiable (decode code only).

    Example:
    ```mlir
    %row = mix.dynamic_slice %wpe[%pos] dim 0 : (tensor<64x16xf32>, tensor<i32>) -> tensor<1x16xf32>
    ```
  }];
  let arguments = (ins Mix_FloatTensor:$input, Mix_Position:$offset,
                       ConfinedAttr<I64Attr, [IntNonNegative]>:$dim);
  let results = (outs Mix_FloatTensor:$result);
  let assemblyFormat = [{
    $input `[` $offset `]` `dim` $dim attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def Mix_DynamicUpdateSliceOp : Mix_Op<"dynamic_update_slice", [Pure]> {
  let summary = "a tensor with a range of one dimension replaced";
  let description = [{
    `input` with elements `[offset, offset + n)` of dimension `dim` replaced
    by `update` (of size `n` along `dim`, the input's sizes elsewhere),
    `offset` the value of the 0-d `offset` operand: a decode step writing
    its keys and values into the cache. Bufferized in place when `input`
    is a buffer the function may write (a decode state argument). An offset
    outside `[0, size - n]` is undefined behaviour here. Not differentiable.

    Example:
    ```mlir
    %k2 = mix.dynamic_update_slice %cache, %k[%pos] dim 2 : (tensor<1x4x64x4xf32>, tensor<1x4x1x4xf32>, tensor<i32>) -> tensor<1x4x64x4xf32>
    ```
  }];
  let arguments = (ins Mix_FloatTensor:$input, Mix_FloatTensor:$update,
                       Mix_Position:$offset,
                       ConfinedAttr<I64Attr, [IntNonNegative]>:$dim);
  let results = (outs Mix_FloatTensor:$result);
  let assemblyFormat = [{
    $input `,` $update `[` $offset `]` `dim` $dim attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def Mix_PadOp : Mix_Op<"pad", [Pure, Mix_Differentiable]> {
  let summary = "embed into zeros along one dimension (the adjoint of slice)";
  let description = [{
    The result equals zero except for elements `[offset, offset + n)` of
    dimension `dim`, which hold the input (of size n along `dim`).

    Example:
    ```mlir
    %p = mix.pad %x dim 2 offset 16 : tensor<2x8x16xf32> -> tensor<2x8x48xf32>
    ```
  }];
  let arguments = (ins Mix_FloatTensor:$input,
                       ConfinedAttr<I64Attr, [IntNonNegative]>:$dim,
                       ConfinedAttr<I64Attr, [IntNonNegative]>:$offset);
  let results = (outs Mix_FloatTensor:$result);
  let assemblyFormat = [{
    $input `dim` $dim `offset` $offset attr-dict `:` type($input) `->` type($result)
  }];
  let hasVerifier = 1;
}

def Mix_ConcatOp : Mix_Op<"concat", [Pure, Mix_Differentiable]> {
  let summary = "join two tensors along one dimension";
  let description = [{
    Example:
    ```mlir
    %c = mix.concat %a, %b dim 2 : (tensor<2x4x3x8xf32>, tensor<2x4x5x8xf32>) -> tensor<2x4x8x8xf32>
    ```
  }];
  let arguments = (ins Mix_FloatTensor:$lhs, Mix_FloatTensor:$rhs,
                       ConfinedAttr<I64Attr, [IntNonNegative]>:$dim);
  let results = (outs Mix_FloatTensor:$result);
  let assemblyFormat = [{
    $lhs `,` $rhs `dim` $dim attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def Mix_GatherOp : Mix_Op<"gather", [Pure, Mix_Differentiable]> {
  let summary = "rows of a table by index";
  let description = [{
    `result[i..., :] = table[ids[i...], :]` for a `(V, d)` table.

    Example:
    ```mlir
    %x = mix.gather %wte, %tokens : (tensor<256x64xf32>, tensor<2x8xi32>) -> tensor<2x8x64xf32>
    ```
  }];
  let arguments = (ins Mix_FloatTensor:$table, Mix_IndexTensor:$ids);
  let results = (outs Mix_FloatTensor:$result);
  let assemblyFormat = [{
    $table `,` $ids attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def Mix_ScatterAddOp : Mix_Op<"scatter_add", [Pure, Mix_Differentiable]> {
  let summary = "sum rows into a table by index (the adjoint of gather)";
  let description = [{
    `result[v, :] = sum over i with ids[i] = v of updates[i, :]`, zero
    elsewhere; the result is `(V, d)`.

    Example:
    ```mlir
    %g = mix.scatter_add %dx, %tokens : (tensor<2x8x64xf32>, tensor<2x8xi32>) -> tensor<256x64xf32>
    ```
  }];
  let arguments = (ins Mix_FloatTensor:$updates, Mix_IndexTensor:$ids);
  let results = (outs Mix_FloatTensor:$result);
  let assemblyFormat = [{
    $updates `,` $ids attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def Mix_TakeAlongOp : Mix_Op<"take_along", [Pure, Mix_Differentiable]> {
  let summary = "one element of the last dimension per row, by index";
  let description = [{
    `result[i..., 0] = input[i..., ids[i...]]`.

    Example:
    ```mlir
    %t = mix.take_along %logits, %targets : (tensor<2x8x256xf32>, tensor<2x8xi32>) -> tensor<2x8x1xf32>
    ```
  }];
  let arguments = (ins Mix_FloatTensor:$input, Mix_IndexTensor:$ids);
  let results = (outs Mix_FloatTensor:$result);
  let assemblyFormat = [{
    $input `,` $ids attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def Mix_PutAlongOp : Mix_Op<"put_along", [Pure, Mix_Differentiable]> {
  let summary = "scatter one value per row into zeros (adjoint of take_along)";
  let description = [{
    `result[i..., v] = v == ids[i...] ? input[i..., 0] : 0`.

    Example:
    ```mlir
    %p = mix.put_along %d, %targets : (tensor<2x8x1xf32>, tensor<2x8xi32>) -> tensor<2x8x256xf32>
    ```
  }];
  let arguments = (ins Mix_FloatTensor:$input, Mix_IndexTensor:$ids);
  let results = (outs Mix_FloatTensor:$result);
  let assemblyFormat = [{
    $input `,` $ids attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def Mix_CumsumOp : Mix_Op<"cumsum",
    [Pure, SameOperandsAndResultType, Mix_Differentiable]> {
  let summary = "inclusive prefix (or, reversed, suffix) sum along a dimension";
  let description = [{
    `result[.., s, ..] = sum_{t <= s} input[.., t, ..]` along `dim`; with
    `reverse`, the sum runs over `t >= s` (the adjoint).

    Example:
    ```mlir
    %c = mix.cumsum %x dim 1 : tensor<2x8x16xf32>
    ```
  }];
  let arguments = (ins Mix_FloatTensor:$input,
                       ConfinedAttr<I64Attr, [IntNonNegative]>:$dim,
                       UnitAttr:$reverse);
  let results = (outs Mix_FloatTensor:$result);
  let assemblyFormat = [{
    $input `dim` $dim (`reverse` $reverse^)? attr-dict `:` type($input)
  }];
  let hasVerifier = 1;
}

def Mix_CausalMaskOp : Mix_Op<"causal_mask", [Pure, Mix_Differentiable]> {
  let summary = "the additive causal attention mask";
  let description = [{
    A `(S, P + S)` tensor: 0 where query `i` may attend to key `j`
    (`j < P`, a prefix position, or `j - P <= i`), and -inf elsewhere.

    With `at %position` (a 0-d i32), the queries are the positions
    `position + i` of a sequence whose keys are cached: the result is
    `(Q, P + K)` for `Q` queries and `K >= Q` cached positions, 0 where
    `j < P + position + i + 1` (a prefix key or one already written to the
    cache) and -inf elsewhere.

    Example:
    ```mlir
    %m = mix.causal_mask prefix 0 : tensor<8x8xf32>
    %row = mix.causal_mask prefix 2 at %pos : tensor<1x66xf32>
    ```
  }];
  let arguments = (ins ConfinedAttr<I64Attr, [IntNonNegative]>:$prefix,
                       Optional<Mix_Position>:$position);
  let results = (outs Mix_FloatTensor:$result);
  let assemblyFormat = [{
    `prefix` $prefix (`at` $position^)? attr-dict `:` type($result)
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Stream parallelism: the collectives of a model compiled with its streams
// sharded over ranks (`mixc --stream-shards R`). Every rank runs the same
// code on the same batch; the loss is computed, identically, on every rank.
//===----------------------------------------------------------------------===//

def Mix_AllReduceOp : Mix_Op<"all_reduce",
    [SameOperandsAndResultType, Mix_Differentiable]> {
  let summary = "sum of a partial value over the stream ranks";
  let description = [{
    The sum over the ranks of the run of each rank's `input`: a partial sum
    (one rank's streams' share of a mixture) becomes the whole, the same on
    every rank. Its gradient passes through unchanged: the loss is
    replicated, so each rank's partial value sees the same adjoint
    (Megatron's `g` operator). Lowered to a call of the collective the
    runtime gives the package; with one rank it is the identity.

    Example:
    ```mlir
    %u = mix.all_reduce %partial : tensor<2x8x64xf32>
    ```
  }];
  let arguments = (ins Mix_FloatTensor:$input);
  let results = (outs Mix_FloatTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input)";
}

def Mix_GradAllReduceOp : Mix_Op<"grad_all_reduce",
    [Pure, SameOperandsAndResultType, Mix_Differentiable]> {
  let summary = "the input unchanged; its gradient summed over the ranks";
  let description = [{
    The identity on a replicated value that each rank then uses for its
    own streams only: its adjoint is the sum over the ranks of each rank's
    adjoint (Megatron's `f` operator, the conjugate of `mix.all_reduce`).
    Autodiff emits that `mix.all_reduce`; the lowering drops the op.

    Example:
    ```mlir
    %m2 = mix.grad_all_reduce %m : tensor<2x8x16xf32>
    ```
  }];
  let arguments = (ins Mix_FloatTensor:$input);
  let results = (outs Mix_FloatTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input)";
}

def Mix_RankSliceOp : Mix_Op<"rank_slice", [Pure, Mix_Differentiable]> {
  let summary = "this rank's share of one dimension";
  let description = [{
    Dimension `dim` is split into `shards` equal parts, one a rank; the
    result is rank r's part, elements `[r n, (r + 1) n)` with `n` the
    result's size along `dim`. The rank is known only when the code runs.

    Example:
    ```mlir
    %g2 = mix.rank_slice %g dim 2 shards 2 : tensor<2x8x4xf32> -> tensor<2x8x2xf32>
    ```
  }];
  let arguments = (ins Mix_FloatTensor:$input,
                       ConfinedAttr<I64Attr, [IntNonNegative]>:$dim,
                       ConfinedAttr<I64Attr, [IntPositive]>:$shards);
  let results = (outs Mix_FloatTensor:$result);
  let assemblyFormat = [{
    $input `dim` $dim `shards` $shards attr-dict `:` type($input) `->` type($result)
  }];
  let hasVerifier = 1;
}

def Mix_RankPadOp : Mix_Op<"rank_pad", [Pure, Mix_Differentiable]> {
  let summary = "embed into zeros at this rank's share (adjoint of rank_slice)";
  let description = [{
    Zeros, except for this rank's part of dimension `dim` (split into
    `shards` equal parts, one a rank), which holds the input.

    Example:
    ```mlir
    %p = mix.rank_pad %dg dim 2 shards 2 : tensor<2x8x2xf32> -> tensor<2x8x4xf32>
    ```
  }];
  let arguments = (ins Mix_FloatTensor:$input,
                       ConfinedAttr<I64Attr, [IntNonNegative]>:$dim,
                       ConfinedAttr<I64Attr, [IntPositive]>:$shards);
  let results = (outs Mix_FloatTensor:$result);
  let assemblyFormat = [{
    $input `dim` $dim `shards` $shards attr-dict `:` type($input) `->` type($result)
  }];
  let hasVerifier = 1;
}

#endif // MIX_DIALECT_MIX_IR_MIXPRIMITIVEOPS_TD
