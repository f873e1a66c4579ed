// Package fbc loads an OLM File-Based Catalog from an fs.FS and validates it
// with the same verdict as `opm validate`, reporting every independent problem
// with its file and line instead of stopping at the first.
package fbc
