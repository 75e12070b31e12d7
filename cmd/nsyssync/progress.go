package main

import (
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/term"

	"github.com/nsyssync/nsyssync/internal/textsafe"
)

// progress shows what a long run is doing on one line of stderr, with a
// spinner and the time spent, and erases it before the report is written.
// It is silent unless stderr is a terminal, so logs and pipes stay clean.
type progress struct {
	w       io.Writer
	enabled bool
	// width of the terminal: a longer line would wrap, and then the
	// carriage return could not erase it. 0: unknown.
	width int
	tick  time.Duration
	// delay: nothing is shown for work shorter than this.
	delay time.Duration

	mu sync.Mutex
	// prefix goes before every step, e.g. "[2/5] " when several files
	// are analysed.
	prefix  string
	msg     string
	started time.Time
	shown   bool
	stop    chan struct{}
	done    chan struct{}
}

// newProgress returns a progress line on stderr when stderr is a terminal.
func newProgress(stderr io.Writer) *progress {
	fd, tty := terminalFd(stderr)
	p := &progress{w: stderr, enabled: tty, tick: 100 * time.Millisecond, delay: 300 * time.Millisecond}
	if tty {
		if w, _, err := term.GetSize(fd); err == nil {
			p.width = w
		}
	}
	return p
}

var spinnerFrames = []string{"⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"}

// set names the current step and starts the spinner if it is not running.
func (p *progress) set(msg string) {
	if !p.enabled {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.msg = p.prefix + textsafe.Display(msg, textsafe.Terminal)
	if p.stop != nil {
		return
	}
	p.started = time.Now()
	p.stop, p.done = make(chan struct{}), make(chan struct{})
	go p.run(p.stop, p.done)
}

func (p *progress) run(stop, done chan struct{}) {
	defer close(done)
	t := time.NewTicker(p.tick)
	defer t.Stop()
	for frame := 0; ; frame++ {
		select {
		case <-stop:
			return
		case <-t.C:
		}
		p.mu.Lock()
		if elapsed := time.Since(p.started); elapsed >= p.delay {
			line := fmt.Sprintf("%s %s (%.1fs)", spinnerFrames[frame%len(spinnerFrames)], p.msg, elapsed.Seconds())
			if p.width > 1 {
				line = ansi.Truncate(line, p.width-1, "…")
			}
			fmt.Fprint(p.w, "\r\x1b[K"+line)
			p.shown = true
		}
		p.mu.Unlock()
	}
}

// setPrefix sets what goes before the following steps.
func (p *progress) setPrefix(prefix string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.prefix = prefix
}

// clear stops the spinner and erases its line.
func (p *progress) clear() {
	p.mu.Lock()
	stop, done := p.stop, p.done
	p.stop, p.done = nil, nil
	p.mu.Unlock()
	if stop == nil {
		return
	}
	close(stop)
	<-done
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.shown {
		fmt.Fprint(p.w, "\r\x1b[K")
		p.shown = false
	}
}
