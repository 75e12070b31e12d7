// Package triage analyses many Nsight Systems exports at once — a night's
// worth of traces — and keeps what it finds so that nights can be compared.
//
// The pieces, in the order a nightly job meets them:
//
//   - Expand turns command-line arguments (files, directories walked for
//     *.sqlite and *.nsys-rep, glob patterns) into a list of inputs, and a
//     Shard keeps a deterministic share of them (by a hash of each file's
//     base name) so that a Slurm array or a Kubernetes indexed Job can split
//     a large night.
//   - Batch analyses the inputs in parallel, each failure isolated: a bad
//     export becomes a Result with an error while the others go on. Inputs
//     ending in .nsys-rep are exported to SQLite first by a Converter that
//     runs `nsys export` into a temporary directory.
//   - A Summary folds the results into totals per trace, the sites that
//     cost most across all traces and the sites seen in many traces; the
//     results themselves can be written as JSON Lines, one contract.Document
//     (the nsyssync/v1 contract) per trace.
//   - A DB (embedded SQLite, schema versioned and migrated step by step)
//     records runs, traces and their sites under a fingerprint that stays
//     the same across nights as timings change (classify.Fingerprint: the
//     APIs with the program's file and line, else the native call path,
//     else the APIs, stream and NVTX path with digits folded — never a
//     duration nor an absolute path). History and Top read a site's trend
//     across runs.
//   - Compare diffs two Snapshots — from two exports, two JSON reports or
//     two recorded runs — into sites new, gone, grown and shrunk, and
//     Diff.Regressions decides a CI gate.
//   - MergeLines and MergeDB combine what the shards wrote.
package triage
