package whatif

import "strings"

// IsRecordCall reports whether an API call records an event.
func IsRecordCall(name string) bool {
	return strings.HasPrefix(name, "cudaEventRecord") || strings.HasPrefix(name, "cuEventRecord")
}

// IsStreamWaitCall reports whether an API call makes a stream wait for an
// event.
func IsStreamWaitCall(name string) bool {
	return strings.HasPrefix(name, "cudaStreamWaitEvent") || strings.HasPrefix(name, "cuStreamWaitEvent")
}
