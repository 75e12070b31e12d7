// Package trace reads Nsight Systems SQLite exports (nsys export --type
// sqlite) and finds every point where a host thread blocked on the GPU.
//
// Open checks the file (SQLite header, truncation, nsys tables, CUDA trace)
// and detects its schema; Load reads what sync analysis needs, pushing
// filters into SQL: API calls are selected by name id, GPU activity is
// streamed once through per-sync accumulators instead of being held in
// memory, and callchains, Python frames and strings are fetched by key.
//
// The export is opened read-only and immutable: nothing is written, locked
// or created next to it.
package trace
