//===- EmulateKernels.cpp - The kernels as host functions -----------------===//
//
// mixc --target cuda --emulate: the kernels the CUDA pipeline outlined, after
// every pass of the project, become host functions that the emulator calls
// once a thread; the host code is left exactly as for the device. What the
// function cannot compute alone becomes an argument (the ids, the block's
// shared memory) or a call of the emulator (barriers, shuffles, failed
// checks): runtime/emulator/include/mixemu/Emulator.h.
//
//===----------------------------------------------------------------------===//

#include "EmulateMma.h"

#include "mix/Codegen/Declarations.h"
#include "mix/Target/CUDA/CUDACodegen.h"
#include "mix/Target/CUDA/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlowOps.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/CompilationInterfaces.h"
#include "mlir/Dialect/GPU/Transforms/Passes.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/DataLayoutInterfaces.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/MathExtras.h"

using namespace mlir;
using namespace mlir::mix;

namespace mlir::mix {
#define GEN_PASS_DEF_MIXEMULATEKERNELSPASS
#include "mix/Target/CUDA/Passes.h.inc"
} // namespace mlir::mix

namespace {
/// The position of a dimension's id among the emulated kernel's trailing
/// arguments: thread id, block id, block size, grid size, each x, y, z.
unsigned idArgument(unsigned group, gpu::Dimension dim) {
  return group * 3 + static_cast<unsigned>(dim);
}
constexpr unsigned kNumIdArguments = 12;

/// The block's shared memory as the emulator passes it after the ids: a
/// window of this many bytes (MIXEMU_SHARED_WINDOW_BYTES, the 48 KiB an
/// H200 gives a block without opting in), static shared memory first, each
/// workgroup attribution at a multiple of kSharedAlignment, then the
/// dynamic part, whose size is the last argument.
constexpr int64_t kSharedWindowBytes = 48 * 1024;
constexpr int64_t kSharedAlignment = 16; // MIXEMU_SHARED_ALIGNMENT
/// A thread's private memory lives on its stack, which in a kernel with
/// barriers is a fiber's (128 KiB, runtime/emulator/Fibers.c).
constexpr int64_t kMaxPrivateBytes = 16 * 1024;
/// The lanes of a warp (a subgroup).
constexpr int64_t kWarpSize = 32;

/// The modes of mixemu_shuffle (Emulator.h: MIXEMU_SHUFFLE_*).
int32_t shuffleMode(gpu::ShuffleMode mode) {
  switch (mode) {
  case gpu::ShuffleMode::XOR:
    return 0;
  case gpu::ShuffleMode::DOWN:
    return 1;
  case gpu::ShuffleMode::UP:
    return 2;
  case gpu::ShuffleMode::IDX:
    return 3;
  }
  llvm_unreachable("a shuffle mode");
}

/// \p type on the host, where all memory is one: a memref without its
/// memory space (#gpu.address_space<workgroup> and the like).
Type hostType(Type type) {
  if (auto memref = dyn_cast<MemRefType>(type))
    if (memref.getMemorySpace())
      return MemRefType::get(memref.getShape(), memref.getElementType(),
                             memref.getLayout());
  if (auto memref = dyn_cast<UnrankedMemRefType>(type))
    if (memref.getMemorySpace())
      return UnrankedMemRefType::get(memref.getElementType(), Attribute());
  return type;
}

/// The emulator's function `name : type`, declared at the end of
/// \p module once; null (with an error) when the name is something else.
func::FuncOp declare(ModuleOp module, StringRef name, FunctionType type) {
  return lookupOrDeclareFunction(module, name, type, DeclarationPlace::End);
}

/// A NUL-terminated string constant `<prefix><count>` in \p module, one for
/// each call (its address tells barriers apart).
LLVM::GlobalOp stringGlobal(ModuleOp module, StringRef prefix, StringRef text,
                            unsigned &count) {
  std::string name = (prefix + Twine(count++)).str();
  OpBuilder b = OpBuilder::atBlockEnd(module.getBody());
  std::string value = text.str();
  value.push_back('\0');
  auto type = LLVM::LLVMArrayType::get(IntegerType::get(module.getContext(), 8),
                                       value.size());
  return LLVM::GlobalOp::create(b, module.getLoc(), type, /*isConstant=*/true,
                                LLVM::Linkage::Internal, name,
                                b.getStringAttr(value));
}

/// A runtime check's message on one line, without its banner:
/// "out-of-bounds access; Location: loc(...)".
std::string describe(StringRef message) {
  message.consume_front("ERROR: Runtime op verification failed\n");
  std::string out;
  for (StringRef line : llvm::split(message.trim(), '\n')) {
    line.consume_front("^ ");
    if (!out.empty())
      out += "; ";
    out += line.trim().str();
  }
  return out;
}

/// `loc(...)` of \p op, which names a barrier or a shuffle in messages.
std::string placeOf(Operation *op) {
  std::string text;
  llvm::raw_string_ostream os(text);
  op->getLoc().print(os);
  return text;
}

/// The bytes of a static memref of identity layout, or nothing.
std::optional<int64_t> staticBytes(MemRefType type, const DataLayout &layout) {
  if (!type.hasStaticShape() || !type.getLayout().isIdentity())
    return std::nullopt;
  return type.getNumElements() *
         static_cast<int64_t>(
             layout.getTypeSize(type.getElementType()).getFixedValue());
}

struct MixEmulateKernelsPass
    : mlir::mix::impl::MixEmulateKernelsPassBase<MixEmulateKernelsPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    auto kernels = module.lookupSymbol<gpu::GPUModuleOp>(kKernelModuleName);
    if (!kernels)
      return;
    MLIRContext *ctx = &getContext();
    // The tensor-core products' fragments, as the emulation places them,
    // must be MLIR's.
    Operation *anyMma = nullptr;
    kernels.walk([&](Operation *op) {
      if (!isa<nvgpu::MmaSyncOp, NVVM::MmaOp>(op))
        return WalkResult::advance();
      anyMma = op;
      return WalkResult::interrupt();
    });
    if (anyMma && failed(checkMmaFragments(anyMma)))
      return signalPassFailure();
    // A subgroup reduction becomes the butterfly of shuffles it is on a
    // device without a reduction instruction, over 32-bit values; nothing
    // else is touched (no folding).
    bool reduces =
        kernels
            .walk([](gpu::SubgroupReduceOp) { return WalkResult::interrupt(); })
            .wasInterrupted();
    if (reduces) {
      RewritePatternSet reductions(ctx);
      populateGpuBreakDownSubgroupReducePatterns(reductions, 32);
      populateGpuLowerSubgroupReduceToShufflePatterns(reductions, kWarpSize,
                                                      32);
      populateGpuLowerClusteredSubgroupReduceToShufflePatterns(reductions,
                                                               kWarpSize, 32);
      GreedyRewriteConfig config;
      config.enableFolding(false)
          .enableConstantCSE(false)
          .setRegionSimplificationLevel(GreedySimplifyRegionLevel::Disabled);
      // What is left is refused below by name.
      (void)applyPatternsGreedily(kernels, std::move(reductions), config);
    }
    SmallVector<gpu::GPUFuncOp> funcs(kernels.getOps<gpu::GPUFuncOp>());
    for (gpu::GPUFuncOp kernel : funcs)
      if (failed(emulate(module, kernel)))
        return signalPassFailure();
    // The host code loads and launches the kernels as on the device; the
    // emulator recognises its marker where a cubin would be.
    OpBuilder b(kernels);
    auto target = NVVM::NVVMTargetAttr::get(ctx);
    auto object =
        gpu::ObjectAttr::get(ctx, target, gpu::CompilationTarget::Binary,
                             b.getStringAttr(kEmulatorMarker),
                             /*properties=*/nullptr,
                             /*kernels=*/nullptr);
    gpu::BinaryOp::create(b, kernels.getLoc(), kKernelModuleName,
                          /*offloadingHandler=*/nullptr,
                          b.getArrayAttr({object}));
    kernels.erase();
  }

  LogicalResult emulate(ModuleOp module, gpu::GPUFuncOp kernel) {
    MLIRContext *ctx = &getContext();
    StringRef name = kernel.getName();
    Location loc = kernel.getLoc();
    Type index = IndexType::get(ctx);
    Type i8 = IntegerType::get(ctx, 8);
    DataLayout layout = DataLayout::closest(kernel);

    // Where each workgroup attribution lies in the block's shared memory,
    // and each private one in the thread's.
    SmallVector<BlockArgument> workgroup(kernel.getWorkgroupAttributions());
    SmallVector<BlockArgument> privates(kernel.getPrivateAttributions());
    SmallVector<int64_t> sharedOffsets, privateOffsets;
    int64_t sharedBytes = 0, privateBytes = 0;
    auto place = [&](ArrayRef<BlockArgument> attributions,
                     SmallVectorImpl<int64_t> &offsets, int64_t &total,
                     StringRef what) -> LogicalResult {
      for (BlockArgument attribution : attributions) {
        auto type = cast<MemRefType>(attribution.getType());
        std::optional<int64_t> bytes = staticBytes(type, layout);
        if (!bytes)
          return kernel.emitError()
                 << "kernel " << name << ": " << what << " memory of type "
                 << type
                 << ", which the CUDA emulator does not run (static "
                    "shapes and identity layouts only)";
        total = llvm::alignTo(total, kSharedAlignment);
        offsets.push_back(total);
        total += *bytes;
      }
      total = llvm::alignTo(total, kSharedAlignment);
      return success();
    };
    if (failed(place(workgroup, sharedOffsets, sharedBytes, "workgroup")) ||
        failed(place(privates, privateOffsets, privateBytes, "private")))
      return failure();
    if (sharedBytes > kSharedWindowBytes)
      return kernel.emitError() << "kernel " << name << ": " << sharedBytes
                                << " bytes of workgroup memory exceed the "
                                << kSharedWindowBytes << " a block has";
    if (privateBytes > kMaxPrivateBytes)
      return kernel.emitError()
             << "kernel " << name << ": " << privateBytes
             << " bytes of private memory a thread exceed the "
             << kMaxPrivateBytes << " the CUDA emulator gives one";

    // The kernel's arguments, the twelve ids, the block's shared memory and
    // the size of its dynamic part.
    auto window = MemRefType::get({kSharedWindowBytes}, i8);
    SmallVector<Type> inputs;
    for (Type type : kernel.getArgumentTypes())
      inputs.push_back(hostType(type));
    inputs.append(kNumIdArguments, index);
    inputs.push_back(window);
    inputs.push_back(index);
    OpBuilder b = OpBuilder::atBlockEnd(module.getBody());
    auto host =
        func::FuncOp::create(b, loc, (kEmulatedKernelPrefix + name).str(),
                             FunctionType::get(ctx, inputs, {}));
    host->setAttr(kEmulatedKernelAttr, b.getStringAttr(name));
    // Optimised for size: LLVM's full unrolling of the hand-scheduled
    // kernels' constant-trip loops (a tile's rows, a head's elements)
    // would multiply the package's compile time for little speed.
    host->setAttr("passthrough", b.getArrayAttr({b.getStringAttr("optsize")}));
    if (auto known = kernel.getKnownBlockSizeAttr())
      host->setAttr("mix.known_block_size", known);
    if (auto known = kernel.getKnownGridSizeAttr())
      host->setAttr("mix.known_grid_size", known);
    if (sharedBytes > 0)
      host->setAttr(kEmulatedSharedBytesAttr, b.getI64IntegerAttr(sharedBytes));
    unsigned numArguments = kernel.getNumArguments();
    host.getBody().takeBody(kernel.getBody());
    Block &entry = host.getBody().front();
    SmallVector<Value> ids;
    for (unsigned i = 0; i < kNumIdArguments; ++i)
      ids.push_back(entry.addArgument(index, loc));
    Value shared = entry.addArgument(window, loc);
    Value dynamicSharedBytes = entry.addArgument(index, loc);

    // The attributions become views of the block's shared memory and of
    // memory on the thread's stack.
    OpBuilder eb = OpBuilder::atBlockBegin(&entry);
    auto viewAt = [&](Value memory, int64_t offset, Type type) {
      Value shift = arith::ConstantIndexOp::create(eb, loc, offset);
      return memref::ViewOp::create(eb, loc, hostType(type), memory, shift,
                                    ValueRange{})
          .getResult();
    };
    for (auto [attribution, offset] : llvm::zip(workgroup, sharedOffsets))
      attribution.replaceAllUsesWith(
          viewAt(shared, offset, attribution.getType()));
    if (!privates.empty()) {
      Value stack =
          memref::AllocaOp::create(eb, loc, MemRefType::get({privateBytes}, i8),
                                   eb.getI64IntegerAttr(kSharedAlignment));
      // Uninitialized on a device: 0xFF bytes here, as shared memory is.
      Value zero = arith::ConstantIndexOp::create(eb, loc, 0);
      Value one = arith::ConstantIndexOp::create(eb, loc, 1);
      Value end = arith::ConstantIndexOp::create(eb, loc, privateBytes);
      Value poison = arith::ConstantIntOp::create(eb, loc, -1, 8);
      scf::ForOp::create(eb, loc, zero, end, one, ValueRange{},
                         [&](OpBuilder &fb, Location l, Value i, ValueRange) {
                           memref::StoreOp::create(fb, l, poison, stack, i);
                           scf::YieldOp::create(fb, l);
                         });
      for (auto [attribution, offset] : llvm::zip(privates, privateOffsets))
        attribution.replaceAllUsesWith(
            viewAt(stack, offset, attribution.getType()));
    }
    entry.eraseArguments(numArguments, workgroup.size() + privates.size());
    // On the host all memory is one: no memref keeps a memory space.
    host.walk([](Operation *op) {
      for (Value result : op->getResults())
        result.setType(hostType(result.getType()));
      for (Region &region : op->getRegions())
        for (Block &block : region)
          for (BlockArgument argument : block.getArguments())
            argument.setType(hostType(argument.getType()));
    });

    func::FuncOp barrier =
        declare(module, "mixemu_barrier",
                FunctionType::get(ctx, {LLVM::LLVMPointerType::get(ctx)}, {}));
    if (!barrier)
      return failure();
    bool usesBarrier = false, usesShuffle = false;
    MmaExchange exchange;
    // Rewrite each op of the body once.
    SmallVector<Operation *> ops;
    host.walk([&](Operation *op) {
      if (op != host.getOperation())
        ops.push_back(op);
    });
    for (Operation *op : ops) {
      OpBuilder ob(op);
      Location opLoc = op->getLoc();
      auto replaceId = [&](Value result, unsigned group, gpu::Dimension dim) {
        result.replaceAllUsesWith(ids[idArgument(group, dim)]);
        op->erase();
      };
      auto replace = [&](Value value) {
        op->getResult(0).replaceAllUsesWith(value);
        op->erase();
      };
      // The thread's place in its block, x fastest, and in its warp.
      auto linearThread = [&]() -> Value {
        auto id = [&](unsigned group, gpu::Dimension dim) {
          return ids[idArgument(group, dim)];
        };
        Value zy = arith::AddIOp::create(
            ob, opLoc, id(0, gpu::Dimension::y),
            arith::MulIOp::create(ob, opLoc, id(2, gpu::Dimension::y),
                                  id(0, gpu::Dimension::z)));
        return arith::AddIOp::create(
            ob, opLoc, id(0, gpu::Dimension::x),
            arith::MulIOp::create(ob, opLoc, id(2, gpu::Dimension::x), zy));
      };
      Value warpSize = nullptr;
      auto getWarpSize = [&]() {
        if (!warpSize)
          warpSize = arith::ConstantIndexOp::create(ob, opLoc, kWarpSize);
        return warpSize;
      };
      if (auto id = dyn_cast<gpu::ThreadIdOp>(op)) {
        replaceId(id, 0, id.getDimension());
      } else if (auto id = dyn_cast<gpu::BlockIdOp>(op)) {
        replaceId(id, 1, id.getDimension());
      } else if (auto id = dyn_cast<gpu::BlockDimOp>(op)) {
        replaceId(id, 2, id.getDimension());
      } else if (auto id = dyn_cast<gpu::GridDimOp>(op)) {
        replaceId(id, 3, id.getDimension());
      } else if (auto id = dyn_cast<gpu::GlobalIdOp>(op)) {
        gpu::Dimension dim = id.getDimension();
        Value first = arith::MulIOp::create(ob, opLoc, ids[idArgument(1, dim)],
                                            ids[idArgument(2, dim)]);
        replace(
            arith::AddIOp::create(ob, opLoc, first, ids[idArgument(0, dim)]));
      } else if (isa<gpu::LaneIdOp>(op)) {
        Value linear = linearThread();
        replace(arith::RemUIOp::create(ob, opLoc, linear, getWarpSize()));
      } else if (isa<gpu::SubgroupIdOp>(op)) {
        Value linear = linearThread();
        replace(arith::DivUIOp::create(ob, opLoc, linear, getWarpSize()));
      } else if (isa<gpu::SubgroupSizeOp>(op)) {
        replace(getWarpSize());
      } else if (isa<gpu::NumSubgroupsOp>(op)) {
        Value threads = arith::MulIOp::create(
            ob, opLoc, ids[idArgument(2, gpu::Dimension::x)],
            arith::MulIOp::create(ob, opLoc,
                                  ids[idArgument(2, gpu::Dimension::y)],
                                  ids[idArgument(2, gpu::Dimension::z)]));
        replace(arith::CeilDivUIOp::create(ob, opLoc, threads, getWarpSize()));
      } else if (isa<gpu::DynamicSharedMemoryOp>(op)) {
        // After the static part, as long as the launch says.
        for (Operation *user : op->getResult(0).getUsers())
          if (auto view = dyn_cast<memref::ViewOp>(user);
              view && failed(checkDynamicView(module, view, dynamicSharedBytes,
                                              name, layout)))
            return failure();
        Value shift = arith::ConstantIndexOp::create(ob, opLoc, sharedBytes);
        replace(memref::ViewOp::create(ob, opLoc, op->getResult(0).getType(),
                                       shared, shift,
                                       ValueRange{dynamicSharedBytes}));
      } else if (isa<gpu::ReturnOp>(op)) {
        func::ReturnOp::create(ob, opLoc);
        op->erase();
      } else if (isa<gpu::BarrierOp>(op)) {
        func::CallOp::create(ob, opLoc, barrier, siteOf(module, ob, op));
        op->erase();
        usesBarrier = true;
      } else if (auto shuffle = dyn_cast<gpu::ShuffleOp>(op)) {
        if (failed(emulateShuffle(module, shuffle, name)))
          return failure();
        usesShuffle = true;
      } else if (isa<nvgpu::MmaSyncOp, NVVM::MmaOp>(op)) {
        Type f32 = Float32Type::get(ctx);
        auto four = MemRefType::get({4}, f32);
        auto two = MemRefType::get({2}, f32);
        if (!exchange.a) {
          // The lane's fragments, once a kernel.
          OpBuilder entryBuilder = OpBuilder::atBlockBegin(&entry);
          exchange.a = memref::AllocaOp::create(entryBuilder, loc, four);
          exchange.b = memref::AllocaOp::create(entryBuilder, loc, two);
          exchange.cd = memref::AllocaOp::create(entryBuilder, loc, four);
        }
        auto mmaFunction = [&](func::FuncOp &function, StringRef name) {
          if (!function)
            function = declare(
                module, name,
                FunctionType::get(
                    ctx, {LLVM::LLVMPointerType::get(ctx), four, two, four},
                    {}));
          return bool(function);
        };
        exchange.site = siteOf(module, ob, op);
        if (auto tf32 = dyn_cast<nvgpu::MmaSyncOp>(op)) {
          if (!mmaFunction(exchange.mmaTF32, "mixemu_mma_m16n8k8_tf32") ||
              failed(emulateMma(tf32, exchange)))
            return failure();
        } else {
          if (!mmaFunction(exchange.mmaBF16, "mixemu_mma_m16n8k16_bf16") ||
              failed(emulateMma(cast<NVVM::MmaOp>(op), exchange)))
            return failure();
        }
        usesShuffle = true;
      } else if (auto check = dyn_cast<cf::AssertOp>(op)) {
        // A failed check calls the emulator, which names the kernel and
        // ends the launch: cf.assert's own lowering would abort mix-run.
        if (failed(failUnless(module, ob, check.getLoc(), check.getArg(),
                              "kernel " + name.str() + ": " +
                                  describe(check.getMsg()))))
          return failure();
        check->erase();
      } else if (op->getDialect() &&
                 op->getDialect()->getNamespace() == "gpu") {
        return op->emitError() << "kernel " << name << ": `" << op->getName()
                               << "` is not run by the CUDA emulator yet";
      }
    }
    if ((exchange.mmaTF32 || exchange.mmaBF16) &&
        failed(eraseDeadFragments(host)))
      return failure();
    if (usesBarrier)
      host->setAttr(kEmulatedUsesBarrierAttr, UnitAttr::get(ctx));
    if (usesShuffle)
      host->setAttr(kEmulatedUsesShuffleAttr, UnitAttr::get(ctx));
    kernel.erase();
    return success();
  }

  /// if (!ok) mixemu_fail("<message>"): an scf.if, not a branch, since the
  /// check may sit inside scf regions, which hold one block.
  LogicalResult failUnless(ModuleOp module, OpBuilder &b, Location loc,
                           Value ok, const std::string &message) {
    MLIRContext *ctx = &getContext();
    func::FuncOp fail =
        declare(module, "mixemu_fail",
                FunctionType::get(ctx, {LLVM::LLVMPointerType::get(ctx)}, {}));
    if (!fail)
      return failure();
    LLVM::GlobalOp text =
        stringGlobal(module, "__mixemu_message_", message, messages);
    Value one = arith::ConstantIntOp::create(b, loc, 1, 1);
    Value failed = arith::XOrIOp::create(b, loc, ok, one);
    auto ifFailed = scf::IfOp::create(b, loc, failed, /*withElseRegion=*/false);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(ifFailed.thenBlock());
    Value address = LLVM::AddressOfOp::create(b, loc, text).getResult();
    func::CallOp::create(b, loc, fail, address);
    return success();
  }

  /// A view of the dynamic shared memory must end inside what the launch
  /// gives (sharedMemBytes): MLIR's runtime verification checks no view,
  /// and the accesses through it are checked against its own shape only.
  LogicalResult checkDynamicView(ModuleOp module, memref::ViewOp view,
                                 Value dynamicSharedBytes, StringRef name,
                                 const DataLayout &layout) {
    OpBuilder b(view);
    Location loc = view.getLoc();
    MemRefType type = view.getType();
    Value bytes = arith::ConstantIndexOp::create(
        b, loc, layout.getTypeSize(type.getElementType()).getFixedValue());
    unsigned dynamicSize = 0;
    for (int64_t size : type.getShape()) {
      Value extent = ShapedType::isDynamic(size)
                         ? view.getSizes()[dynamicSize++]
                         : arith::ConstantIndexOp::create(b, loc, size);
      bytes = arith::MulIOp::create(b, loc, bytes, extent);
    }
    Value end = arith::AddIOp::create(b, loc, view.getByteShift(), bytes);
    Value inside = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ule, end,
                                         dynamicSharedBytes);
    return failUnless(module, b, loc, inside,
                      "kernel " + name.str() +
                          ": memref.view past the end of the dynamic shared "
                          "memory the launch gives; Location: " +
                          placeOf(view));
  }

  /// The address of a string naming \p op's place, its own for each op:
  /// the emulator tells barriers and shuffles apart by it.
  Value siteOf(ModuleOp module, OpBuilder &b, Operation *op) {
    LLVM::GlobalOp text =
        stringGlobal(module, "__mixemu_site_", placeOf(op), sites);
    return LLVM::AddressOfOp::create(b, op->getLoc(), text).getResult();
  }

  /// %r, %valid = gpu.shuffle MODE %v, %offset, %width becomes
  /// mixemu_shuffle(site, mode, bits of %v, %offset, %width): the value's
  /// bits in the low 32 bits of the result and valid in bit 32.
  LogicalResult emulateShuffle(ModuleOp module, gpu::ShuffleOp shuffle,
                               StringRef name) {
    MLIRContext *ctx = &getContext();
    Type type = shuffle.getValue().getType();
    // What the device's lowering (shfl.sync.b32) takes.
    if (!type.isIntOrFloat() || type.getIntOrFloatBitWidth() != 32)
      return shuffle.emitError()
             << "kernel " << name << ": a shuffle of " << type
             << ", which the CUDA emulator does not run (32-bit integers "
                "and floats only)";
    Type i32 = IntegerType::get(ctx, 32), i64 = IntegerType::get(ctx, 64);
    func::FuncOp callee = declare(
        module, "mixemu_shuffle",
        FunctionType::get(
            ctx, {LLVM::LLVMPointerType::get(ctx), i32, i32, i32, i32}, {i64}));
    if (!callee)
      return failure();
    OpBuilder b(shuffle);
    Location loc = shuffle.getLoc();
    Value bits = shuffle.getValue();
    if (type != i32)
      bits = arith::BitcastOp::create(b, loc, i32, bits);
    Value mode = arith::ConstantIntOp::create(
        b, loc, shuffleMode(shuffle.getMode()), 32);
    Value packed = func::CallOp::create(
                       b, loc, callee,
                       ValueRange{siteOf(module, b, shuffle), mode, bits,
                                  shuffle.getOffset(), shuffle.getWidth()})
                       .getResult(0);
    Value result = arith::TruncIOp::create(b, loc, i32, packed);
    if (type != i32)
      result = arith::BitcastOp::create(b, loc, type, result);
    Value validBit = arith::ShRUIOp::create(
        b, loc, packed, arith::ConstantIntOp::create(b, loc, 32, 64));
    Value valid =
        arith::TruncIOp::create(b, loc, IntegerType::get(ctx, 1), validBit);
    shuffle.getShuffleResult().replaceAllUsesWith(result);
    shuffle.getValid().replaceAllUsesWith(valid);
    shuffle->erase();
    return success();
  }

  unsigned messages = 0, sites = 0;
};
} // namespace
