#!/usr/bin/env node
//===- runtime/lib/Data/gen-unicode-tables.js - Code point classes --------===//
// Generates UnicodeTables.inc: the code point ranges of \p{L}, \p{N} and \s as
// node's own regular expression engine (with the u flag) defines them.
//
// The GPT-2 pre-tokenizer regex of the npm package gpt-3-encoder uses exactly
// these three classes, so taking them from node's engine makes the C++
// pre-tokenizer agree with the JavaScript one code point by code point.
//
// Usage: node runtime/lib/Data/gen-unicode-tables.js > runtime/lib/Data/UnicodeTables.inc
// With --ranges it prints "FIRST LAST CLASS" lines (decimal) instead; the
// unit tests use that form to compare the C++ classifier with this node.
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
  '',
];
for (const [first, last, cls] of ranges)
  lines.push(`{${hex(first)}, ${hex(last)}, CodePointClass::${{ L: 'Letter', N: 'Number', S: 'Space' }[cls]}},`);
console.log(lines.join('\n'));
