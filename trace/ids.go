package trace

// The ids of an export, each its own type so that a process id cannot be
// passed where a thread's is wanted. They are int64 underneath: JSON and
// SQL see the numbers nsys stored.
//
// nsys serialises a thread as a globalTid: the tid in bits 0–23, the pid in
// bits 24–47, the VM id in bits 48–55 and other ids above. A process's
// globalPid is the same number with the tid bits zero
// (shared/nsys/NOTES.md; NVIDIA joins GPU ops to calls on
// globalPid = globalTid & 0xFFFFFFFFFF000000).

// GlobalTid is nsys's serialised id of a host thread (a globalTid column).
type GlobalTid int64

// GlobalPid is nsys's serialised id of a process (a globalPid column): a
// globalTid with the tid bits zero.
type GlobalPid int64

// NoThread and NoProcess are the ids of a row whose globalTid or globalPid
// is NULL (the loaders read NULL as 0).
const (
	NoThread  GlobalTid = 0
	NoProcess GlobalPid = 0
)

// idMask covers the pid or tid field (24 bits) of a global id.
const idMask = 0xFFFFFF

// Process returns the globalPid of the thread's process, in the form GPU
// ops and processes carry it.
func (t GlobalTid) Process() GlobalPid { return GlobalPid(t &^ idMask) }

// Pid returns the operating-system pid of the thread's process.
func (t GlobalTid) Pid() int64 { return int64(t>>24) & idMask }

// Tid returns the operating-system tid of the thread.
func (t GlobalTid) Tid() int64 { return int64(t) & idMask }

// Pid returns the operating-system pid of the process.
func (p GlobalPid) Pid() int64 { return int64(p>>24) & idMask }

// DeviceID is a GPU's deviceId as GPU activity carries it (the CUDA
// ordinal the process saw).
type DeviceID int64

// ContextID is a CUDA context's contextId.
type ContextID int64

// StreamID is a CUDA stream's streamId; stream ids are per process.
type StreamID int64

// The ids of a device, context or stream the export does not tell (no GPU
// activity matched the call), or, for a stream, a sync of context scope.
const (
	NoDevice  DeviceID  = -1
	NoContext ContextID = -1
	NoStream  StreamID  = -1
)
