#!/usr/bin/env node
//===- runtime/lib/Data/gen-unicode-tables.js - Code point classes --------===//
// Generates UnicodeTables.inc: the code point ranges of \p{L}, \p{N} and \s as
// node's own regular expression engine (with the u flag) defines them.
//
// The GPT-2 pre-tokenizer regex of the npm package gpt-3-encoder uses exactly
// these three classes, so taking them from node's engine makes the C++
// pre-tokenizer agree with the JavaScript one code point by code point.
//
// The tables record the Unicode version of the node that made them
// (process.versions.unicode): the tokenizer is pinned to that version, whatever
// node a machine has later. Regenerate only to move the pin on purpose.
//
// Usage: node runtime/lib/Data/gen-unicode-tables.js > runtime/lib/Data/UnicodeTables.inc
// With --ranges it prints "FIRST LAST CLASS" lines (decimal) instead, and with
// --version node's Unicode version; the unit tests use those forms to compare
// the C++ classifier with this node where the two Unicode versions agree.
'use strict';

const classes = [
  ['L', /^\p{L}$/u],
  ['N', /^\p{N}$/u],
  ['S', /^\s$/u],
];

// Consecutive code points of one class become one range [first, last].
const ranges = [];
for (let cp = 0; cp <= 0x10ffff; ++cp) {
  // Lone surrogates are not code points of any UTF-8 text.
  if (cp >= 0xd800 && cp <= 0xdfff) continue;
  const ch = String.fromCodePoint(cp);
  const hits = classes.filter(([, re]) => re.test(ch)).map(([name]) => name);
  if (hits.length > 1) {
    process.stderr.write(`gen-unicode-tables: U+${cp.toString(16)} is in ${hits.join(' and ')}\n`);
    process.exit(1);
  }
  if (hits.length === 0) continue;
  const last = ranges[ranges.length - 1];
  if (last && last[2] === hits[0] && last[1] === cp - 1) last[1] = cp;
  else ranges.push([cp, cp, hits[0]]);
}

if (process.argv.includes('--version')) {
  console.log(process.versions.unicode);
  process.exit(0);
}

if (process.argv.includes('--ranges')) {
  for (const [first, last, cls] of ranges) console.log(`${first} ${last} ${cls}`);
  process.exit(0);
}

const hex = (cp) => '0x' + cp.toString(16).toUpperCase().padStart(4, '0');
const lines = [
  '//===- UnicodeTables.inc - Generated: do not edit -------------*- C++ -*-===//',
  '// The code point ranges of \\p{L} (L), \\p{N} (N) and \\s (S) of JavaScript',
  `// regular expressions, from node ${process.version} (Unicode ${process.versions.unicode}).`,
  '// Regenerate: node runtime/lib/Data/gen-unicode-tables.js > UnicodeTables.inc',
  '//',
  '// Define MIXRT_UNICODE_VERSION(STRING) and MIXRT_CODE_POINT_RANGE(FIRST,',
  '// LAST, CLASS) before including; each is expanded where it is defined.',
  '',
  '#ifdef MIXRT_UNICODE_VERSION',
  `MIXRT_UNICODE_VERSION("${process.versions.unicode}")`,
  '#undef MIXRT_UNICODE_VERSION',
  '#endif',
  '',
  '#ifdef MIXRT_CODE_POINT_RANGE',
];
for (const [first, last, cls] of ranges)
  lines.push(`MIXRT_CODE_POINT_RANGE(${hex(first)}, ${hex(last)}, ${{ L: 'Letter', N: 'Number', S: 'Space' }[cls]})`);
lines.push('#undef MIXRT_CODE_POINT_RANGE', '#endif');
console.log(lines.join('\n'));
