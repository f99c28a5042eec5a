#!/usr/bin/env node
//===- runtime/test/Data/gpt2-encode.js - The reference GPT-2 ids ---------===//
// Prints the token ids that the npm package gpt-3-encoder's `encode` gives a
// UTF-8 file, space-separated, for the C++ tokenizer's comparison test.
//
// Usage: node gpt2-encode.js GPT_3_ENCODER_DIR FILE
//
// gpt-3-encoder's encode() is quadratic in the length of its input (it grows
// its result with Array.concat), so the file is encoded in chunks cut where
// the ids cannot change: after a "\n" that has a non-space on both sides.
// There the regex always ends a piece (no piece holds a "\n" next to a
// non-space, and the "\n" on its own is \s+ both in the whole text and at the
// end of a chunk), so the pieces, and the ids, are those of the whole text.
'use strict';

const fs = require('fs');
const path = require('path');

if (process.argv.length !== 4) {
  process.stderr.write('usage: node gpt2-encode.js GPT_3_ENCODER_DIR FILE\n');
  process.exit(2);
}
const { encode } = require(path.resolve(process.argv[2]));
const text = fs.readFileSync(process.argv[3], 'utf8');

const ids = [];
const chunkBytes = 4096;
let start = 0;
const space = /\s/u;
for (let i = start + chunkBytes; i < text.length; ++i) {
  if (text[i - 1] === '\n' && i >= 2 && !space.test(text[i - 2]) && !space.test(text[i])) {
    for (const id of encode(text.slice(start, i))) ids.push(id);
    start = i;
    i = start + chunkBytes;
  }
}
for (const id of encode(text.slice(start))) ids.push(id);
// A symbol missing from the vocabulary comes out as `undefined`; print -1.
process.stdout.write(ids.map((id) => (id === undefined ? -1 : id)).join(' ') + '\n');
