package processors

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"sync"
	"time"

	"github.com/crawlkeeper/crawlkeeper"
)

// Exec hands records to an external program, so teams can process in any
// language. The program reads one record per line on standard input (the
// record as `crawlkeeper records` prints it) and answers each with one
// line holding a JSON object, stored as derived.exec. An object with an
// "error" member reports a failure for that record.
//
// Programs are long-lived: up to Processes of them run at once, each
// handling one record at a time. A program that does not answer within
// Timeout is killed, and one that exits or writes something that is not a
// JSON object is discarded; the record's attempt fails and the next
// record starts a fresh program. Its standard error is kept for the error
// message.
type Exec struct {
	// Command is the program and its arguments.
	Command []string
	// Dir is the program's working directory. Defaults to the current one.
	Dir string
	// Timeout bounds the answer to one record. Defaults to 10s.
	Timeout time.Duration
	// ProcessorVersion is the processor's version: change it when the
	// program changes, to reprocess every record.
	ProcessorVersion int
	// Processes is how many copies of the program may run. Defaults to
	// GOMAXPROCS.
	Processes int

	mu      sync.Mutex
	idle    []*execProc
	running int
	wake    chan struct{}
	closed  bool
	started int
}

var _ crawlkeeper.Processor = (*Exec)(nil)

// Name implements crawlkeeper.Processor.
func (x *Exec) Name() string { return "exec" }

// Version implements crawlkeeper.Processor.
func (x *Exec) Version() int { return x.ProcessorVersion }

// Started returns how many programs were started so far.
func (x *Exec) Started() int {
	x.mu.Lock()
	defer x.mu.Unlock()
	return x.started
}

func (x *Exec) timeout() time.Duration {
	if x.Timeout > 0 {
		return x.Timeout
	}
	return crawlkeeper.DefaultExecTimeout
}

// Process implements crawlkeeper.Processor.
func (x *Exec) Process(ctx context.Context, r *crawlkeeper.Record, derived map[string]any) error {
	line, err := json.Marshal(r)
	if err != nil {
		return err
	}
	p, err := x.get(ctx)
	if err != nil {
		return err
	}
	out, err := p.call(ctx, append(line, '\n'), x.timeout())
	if err != nil {
		p.kill()
		x.put(nil)
		return err
	}
	x.put(p)
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(out, &obj); err != nil {
		return fmt.Errorf("exec %s: answer is not a JSON object: %.200q", x.Command[0], out)
	}
	if e, ok := obj["error"]; ok {
		var msg string
		if json.Unmarshal(e, &msg) != nil {
			msg = string(e)
		}
		return fmt.Errorf("exec %s: %s", x.Command[0], msg)
	}
	derived["exec"] = json.RawMessage(out)
	return nil
}

// get returns an idle program or starts one, waiting while Processes are
// busy.
func (x *Exec) get(ctx context.Context) (*execProc, error) {
	if len(x.Command) == 0 {
		return nil, crawlkeeper.Errorf(crawlkeeper.EINVALID, "exec processor: pipeline.exec.command is empty; name the program to run")
	}
	limit := x.Processes
	if limit <= 0 {
		limit = runtime.GOMAXPROCS(0)
	}
	for {
		x.mu.Lock()
		if x.closed {
			x.mu.Unlock()
			return nil, errors.New("exec processor closed")
		}
		if n := len(x.idle); n > 0 {
			p := x.idle[n-1]
			x.idle = x.idle[:n-1]
			x.mu.Unlock()
			return p, nil
		}
		if x.running < limit {
			x.running++
			x.started++
			x.mu.Unlock()
			p, err := startProc(x.Command, x.Dir)
			if err != nil {
				x.put(nil)
				return nil, err
			}
			return p, nil
		}
		if x.wake == nil {
			x.wake = make(chan struct{})
		}
		wake := x.wake
		x.mu.Unlock()
		select {
		case <-wake:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// put returns p to the idle list, or frees its slot when p is nil (the
// program was discarded).
func (x *Exec) put(p *execProc) {
	x.mu.Lock()
	defer x.mu.Unlock()
	if p == nil || x.closed {
		x.running--
		if p != nil {
			p.kill()
		}
	} else {
		x.idle = append(x.idle, p)
	}
	if x.wake != nil {
		close(x.wake)
		x.wake = nil
	}
}

// Close stops every idle program; busy ones stop when their record is
// done.
func (x *Exec) Close() error {
	x.mu.Lock()
	defer x.mu.Unlock()
	x.closed = true
	for _, p := range x.idle {
		p.stop()
		x.running--
	}
	x.idle = nil
	return nil
}

// execProc is one running program.
type execProc struct {
	cmd    *exec.Cmd
	stdin  *os.File
	lines  chan []byte
	stderr *tailBuffer
	exited chan struct{}
	// dead is closed when the program is discarded, so its reader stops
	// waiting to hand over lines nobody will read.
	dead     chan struct{}
	deadOnce sync.Once
}

func startProc(command []string, dir string) (*execProc, error) {
	cmd := exec.Command(command[0], command[1:]...)
	cmd.Dir = dir
	// An os.Pipe, unlike cmd.StdinPipe, takes write deadlines: a program
	// that stops reading cannot block a worker past the timeout.
	pr, pw, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	cmd.Stdin = pr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		pr.Close()
		pw.Close()
		return nil, err
	}
	p := &execProc{cmd: cmd, stdin: pw, lines: make(chan []byte, 1), stderr: &tailBuffer{max: 2048},
		exited: make(chan struct{}), dead: make(chan struct{})}
	cmd.Stderr = p.stderr
	err = cmd.Start()
	pr.Close() // the child has its copy
	if err != nil {
		pw.Close()
		return nil, crawlkeeper.Errorf(crawlkeeper.EINVALID, "exec processor: start %s: %v", command[0], err)
	}
	go func() {
		defer close(p.exited)
		br := bufio.NewReaderSize(stdout, 64<<10)
		for {
			line, err := br.ReadBytes('\n')
			if t := bytes.TrimSpace(line); len(t) > 0 {
				select {
				case p.lines <- t:
				case <-p.dead:
				}
			}
			if err != nil {
				break
			}
		}
		cmd.Wait()
	}()
	return p, nil
}

// call writes one record and waits for one answer line.
func (p *execProc) call(ctx context.Context, line []byte, timeout time.Duration) ([]byte, error) {
	select {
	case extra := <-p.lines:
		return nil, fmt.Errorf("exec %s: answered more than once for the previous record (%.100q): write exactly one line per record", p.cmd.Path, extra)
	default:
	}
	p.stdin.SetWriteDeadline(time.Now().Add(timeout))
	if _, err := p.stdin.Write(line); err != nil {
		return nil, fmt.Errorf("exec %s: write record: %v%s", p.cmd.Path, err, p.stderr.suffix())
	}
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	select {
	case out := <-p.lines:
		return out, nil
	case <-p.exited:
		// The program may have answered just before it exited.
		select {
		case out := <-p.lines:
			return out, nil
		default:
		}
		return nil, fmt.Errorf("exec %s: exited (%v) without answering%s", p.cmd.Path, p.cmd.ProcessState, p.stderr.suffix())
	case <-timer.C:
		return nil, fmt.Errorf("exec %s: no answer within %v; the program was killed%s", p.cmd.Path, timeout, p.stderr.suffix())
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// stop closes the program's input, which well-behaved programs take as
// the end of their work, and kills it if it does not exit soon.
func (p *execProc) stop() {
	p.deadOnce.Do(func() { close(p.dead) })
	p.stdin.Close()
	go func() {
		select {
		case <-p.exited:
		case <-time.After(5 * time.Second):
			p.cmd.Process.Kill()
		}
	}()
}

func (p *execProc) kill() {
	p.deadOnce.Do(func() { close(p.dead) })
	p.stdin.Close()
	p.cmd.Process.Kill()
}

// tailBuffer keeps the last max bytes written to it.
type tailBuffer struct {
	mu  sync.Mutex
	max int
	buf []byte
}

func (t *tailBuffer) Write(b []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, b...)
	if len(t.buf) > t.max {
		t.buf = append([]byte(nil), t.buf[len(t.buf)-t.max:]...)
	}
	return len(b), nil
}

func (t *tailBuffer) suffix() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	s := strings.TrimSpace(string(t.buf))
	if s == "" {
		return ""
	}
	return "; its standard error ends with: " + s
}
