// Package fbc loads an OLM File-Based Catalog from an fs.FS and validates it
// with the same verdict as `opm validate`, reporting every independent problem
// with its file and line instead of stopping at the first.
//
// Files are decoded in parallel, except those of LargeFile bytes or more,
// which the process decodes one at a time: decoding holds a file and what
// it decodes to, so the peak memory of a validation, or of several at once,
// stays near three times the largest file rather than a multiple of it.
package fbc
