package cuda

import (
	"errors"
	"fmt"
	"runtime"
	"sync"
	"time"
)

// Options choose the GPU.
type Options struct {
	// Ordinal is the CUDA device ordinal (as CUDA_VISIBLE_DEVICES leaves
	// them); 0 is the first GPU.
	Ordinal int
	// PTX replaces the bundled spin kernel (tests of a freshly generated
	// one); nil: the bundled cuda/spin.ptx.
	PTX []byte
}

// Device is a GPU opened for replays and calibration: the driver loaded,
// the primary context retained and the spin kernel loaded. Its methods
// may be called from any goroutine; they run one at a time.
type Device struct {
	gpu gpuDevice
	id  Identity
	// identify adds NVML's view to an identity (nil: nothing to add).
	identify func(*Identity)
	model    DeviceModel
	lim      smLimits
	// overNs: per spin launch of a recorded footprint, the per-op
	// overhead of back-to-back spins of it, measured when a replay first
	// needs it (guarded by mu).
	overNs map[spinLaunch]int64
	// wakeNs: per spin launch of a recorded footprint, the wake-up of a
	// synchronize on it (DeviceModel.WakeNs is a one-warp spin's),
	// measured with overNs.
	wakeNs map[spinLaunch]int64
	mu     sync.Mutex
}

// Open loads the CUDA driver and opens a GPU. Without a driver it returns
// an error wrapping ErrNoDriver, without a GPU one wrapping ErrNoGPU
// (Unavailable reports both).
func Open(opt Options) (*Device, error) {
	ptx := opt.PTX
	if ptx == nil {
		ptx = spinPTX
	}
	g, err := openGPU(opt.Ordinal, ptx)
	if err != nil {
		if Unavailable(err) {
			return nil, err
		}
		return nil, fmt.Errorf("opening GPU %d: %w", opt.Ordinal, err)
	}
	d, err := newDevice(g, readNVML)
	if err != nil {
		return nil, errors.Join(err, g.close())
	}
	return d, nil
}

// newDevice names the GPU (identify may add to its identity) and
// measures the spin kernel and the wake-up of a synchronize on it (a few
// milliseconds).
func newDevice(g gpuDevice, identify func(*Identity)) (*Device, error) {
	d := &Device{gpu: g, id: g.identity(), identify: identify, lim: g.limits()}
	if identify != nil {
		identify(&d.id)
	}
	m, err := d.measureModel()
	if err != nil {
		return nil, fmt.Errorf("measuring the spin kernel on %s: %w", d.id.Name, err)
	}
	d.model = m
	return d, nil
}

// Close releases the GPU; it may be called more than once.
func (d *Device) Close() error { return d.gpu.close() }

// Identity names the GPU, with its clocks and throttle reasons read now.
func (d *Device) Identity() Identity {
	id := d.id
	if d.identify != nil {
		d.identify(&id)
	}
	return id
}

// withSession runs f on a locked OS thread bound to a new session, and
// releases the session after.
func (d *Device) withSession(spec sessionSpec, f func(s session) error) error {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	s, err := d.gpu.newSession(spec)
	if err != nil {
		return err
	}
	err = s.bind()
	if err == nil {
		err = f(s)
	}
	return errors.Join(err, s.release())
}

// measureModel times a chain of back-to-back spins (the per-op overhead
// beyond the durations asked for), a launch call, the wake-up of a synchronize after a
// stamped spin, and the resolution of %globaltimer.
func (d *Device) measureModel() (DeviceModel, error) {
	var m DeviceModel
	err := d.withSession(sessionSpec{streams: 1, events: 2, timing: true, stamps: 1}, func(s session) error {
		if err := warmUp(s); err != nil {
			return err
		}
		step, err := s.timerStep(0)
		if err != nil {
			return err
		}
		m.TimerStepNs = int64(step)
		// Each measured modelRepeats times, the median kept: a single
		// measurement taken while the host stalled (on the H100 machine
		// once: a 26 µs launch call, 13 µs of spin overhead) would skew
		// every replay of the device.
		var over, call, wake []int64
		for range modelRepeats {
			o, err := chainOverhead(s, oneWarp, 100, 20_000)
			if err != nil {
				return err
			}
			c, err := idleLaunchCall(s, 30)
			if err != nil {
				return err
			}
			w, err := wakeUp(s, 15, 50_000, oneWarp)
			if err != nil {
				return err
			}
			over, call, wake = append(over, o), append(call, c), append(wake, w)
		}
		m.SpinOverheadNs, m.LaunchCallNs, m.WakeNs = median(over), median(call), median(wake)
		return nil
	})
	return m, err
}

// modelRepeats: how many times a device measures each of its constants
// (the model's and each footprint's spin overhead); it keeps the median.
const modelRepeats = 3

// warmUpTime is how long a device is kept busy when it is opened, before
// it measures itself: a freshly started machine's first replays ran up to
// 6% longer than its later ones (docs/replay.md).
const warmUpTime = 200 * time.Millisecond

// warmUp launches spins on stream 0, each awaited: five short ones (the
// first launches pay for the JIT and lazy loading), then 1 ms ones until
// warmUpTime has passed (at most 400), so that the GPU's clocks and the
// host thread's core leave their idle states.
func warmUp(s session) error {
	start := time.Now()
	for i := 0; i < 405 && (i < 5 || time.Since(start) < warmUpTime); i++ {
		ns := int64(1_000_000)
		if i < 5 {
			ns = 1_000
		}
		if err := s.spin(0, ns, oneWarp, -1); err != nil {
			return err
		}
		if err := s.syncStream(0); err != nil {
			return err
		}
	}
	return nil
}

// idleLaunchCall returns the median host time of trials launches of a
// spin on an idle stream.
func idleLaunchCall(s session, trials int) (int64, error) {
	base := time.Now()
	var calls []int64
	for range trials {
		t0 := time.Since(base)
		if err := s.spin(0, 0, oneWarp, -1); err != nil {
			return 0, err
		}
		calls = append(calls, int64(time.Since(base)-t0))
		if err := s.syncStream(0); err != nil {
			return 0, err
		}
	}
	return median(calls), nil
}

// measureFootprints measures, for each launch not measured yet, the
// per-op overhead of 50 back-to-back 20 µs spins of it (about 1.5 ms
// each, the median of modelRepeats); d.mu must be held.
func (d *Device) measureFootprints(launches []spinLaunch) error {
	var todo []spinLaunch
	for _, l := range launches {
		if _, ok := d.overNs[l]; !ok {
			todo = append(todo, l)
		}
	}
	if len(todo) == 0 {
		return nil
	}
	if d.overNs == nil {
		d.overNs, d.wakeNs = map[spinLaunch]int64{}, map[spinLaunch]int64{}
	}
	return d.withSession(sessionSpec{streams: 1, events: 2, timing: true, stamps: 1}, func(s session) error {
		for _, l := range todo {
			var over, wake []int64
			for range modelRepeats {
				o, err := chainOverhead(s, l, 50, 20_000)
				if err != nil {
					return fmt.Errorf("timing back-to-back spins of %d×%d: %w", l.grid, l.block, err)
				}
				w, err := wakeUp(s, 15, 20_000, l)
				if err != nil {
					return fmt.Errorf("timing the wake-up after a spin of %d×%d: %w", l.grid, l.block, err)
				}
				over, wake = append(over, o), append(wake, w)
			}
			d.overNs[l], d.wakeNs[l] = median(over), median(wake)
		}
		return nil
	})
}

// chainOverhead launches n spins of ns shaped l back to back behind a
// long spin that lets the queue fill, and returns how much longer than ns
// each took on average (event-timed).
func chainOverhead(s session, l spinLaunch, n int, ns int64) (int64, error) {
	if err := s.spin(0, 300_000+int64(n)*2_000, oneWarp, -1); err != nil {
		return 0, err
	}
	if err := s.record(0, 0); err != nil {
		return 0, err
	}
	for range n {
		if err := s.spin(0, ns, l, -1); err != nil {
			return 0, err
		}
	}
	if err := s.record(1, 0); err != nil {
		return 0, err
	}
	if err := s.syncStream(0); err != nil {
		return 0, err
	}
	el, err := s.elapsed(0, 1)
	if err != nil {
		return 0, err
	}
	return max(int64(el)/int64(n)-ns, 0), nil
}

// wakeUp measures, trials times, the host time from seeing a spin of ns
// shaped l start (its start stamp in page-locked memory) to the return of
// a stream synchronize, less the spin's own GPU time: the synchronize's
// wake-up. A full wave of a recorded footprint (1024×256 on an H200)
// wakes 0.7 µs later than one warp (TestGPUProbeWake).
func wakeUp(s session, trials int, ns int64, l spinLaunch) (int64, error) {
	return wakeUpWith(s, trials, ns, l, nil, func() error { return s.syncStream(0) })
}

// wakeUpWith is wakeUp with another synchronize (sync), after queued (nil:
// nothing) has queued what it waits for behind the spin.
func wakeUpWith(s session, trials int, ns int64, l spinLaunch, queued, sync func() error) (int64, error) {
	base := time.Now()
	var wake []int64
	for range trials {
		s.clearStamps()
		if err := s.spin(0, ns, l, 0); err != nil {
			return 0, err
		}
		if queued != nil {
			if err := queued(); err != nil {
				return 0, err
			}
		}
		deadline := time.Now().Add(time.Second)
		seen := int64(0)
		for {
			if st, _ := s.stamp(0); st != 0 {
				seen = int64(time.Since(base))
				break
			}
			if time.Now().After(deadline) {
				return 0, errors.New("the spin kernel never started (no stamp after 1 s)")
			}
		}
		if err := sync(); err != nil {
			return 0, err
		}
		ret := int64(time.Since(base))
		st, end := s.stamp(0)
		wake = append(wake, max(ret-seen-int64(end-st), 0))
	}
	return median(wake), nil
}
