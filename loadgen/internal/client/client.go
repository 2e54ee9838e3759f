// Package client sends HTTP/1.1 requests over kept-alive connections with as little work per request
// as it can: the request head is written into a per-connection buffer, the response is parsed by
// net/http's own ReadResponse, and the body is discarded unless asked for. One goroutine per request
// in flight, no connection goroutines: a request costs the scheduler's wake-up and its response's.
package client

import (
	"bufio"
	"errors"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"sync"
	"syscall"
	"time"
)

// ErrorClass names why a request got no response.
type ErrorClass string

const (
	OK      ErrorClass = ""
	Timeout ErrorClass = "timeout"
	Refused ErrorClass = "refused"
	Reset   ErrorClass = "reset"
	Other   ErrorClass = "other"
)

// Result is what one request got.
type Result struct {
	Status       int
	ServerTiming string
	Body         []byte // only when asked for
	Err          ErrorClass
	Detail       error
}

type conn struct {
	net.Conn
	io        io.ReadWriter // the socket's reads and writes (rawio_linux.go)
	r         *bufio.Reader
	wbuf      []byte
	idleSince time.Time
}

// Pool holds the idle connections to one target, the most recently used on top.
type Pool struct {
	addr        string
	host        string
	prefix      string
	mu          sync.Mutex
	idle        []*conn
	dialer      net.Dialer
	idleTimeout time.Duration
}

// NewPool prepares connections to a base URL such as http://127.0.0.1:8080, closing those idle
// longer than idleTimeout (0: never).
func NewPool(base string, idleTimeout time.Duration) (*Pool, error) {
	u, err := url.Parse(base)
	if err != nil {
		return nil, err
	}
	return &Pool{
		addr: u.Host, host: u.Host, prefix: u.Path,
		dialer:      net.Dialer{Timeout: 5 * time.Second},
		idleTimeout: idleTimeout,
	}, nil
}

func (p *Pool) get(deadline time.Time) (*conn, bool, error) {
	p.mu.Lock()
	if n := len(p.idle); n > 0 {
		c := p.idle[n-1]
		p.idle = p.idle[:n-1]
		p.mu.Unlock()
		return c, true, nil
	}
	p.mu.Unlock()
	d := p.dialer
	d.Deadline = deadline
	nc, err := d.Dial("tcp", p.addr)
	if err != nil {
		return nil, false, err
	}
	rw := newRawIO(nc)
	return &conn{Conn: nc, io: rw, r: bufio.NewReaderSize(rw, 4096), wbuf: make([]byte, 0, 512)}, false, nil
}

// put returns a connection to the top of the idle stack and closes those at its bottom that have
// been idle too long. The stack only ever grows on top, so it is ordered by when each went idle.
func (p *Pool) put(c *conn) {
	c.idleSince = time.Now()
	p.mu.Lock()
	p.idle = append(p.idle, c)
	stale := p.takeStale(c.idleSince)
	p.mu.Unlock()
	for _, s := range stale {
		s.Close()
	}
}

func (p *Pool) takeStale(now time.Time) []*conn {
	if p.idleTimeout <= 0 {
		return nil
	}
	n := 0
	for n < len(p.idle) && now.Sub(p.idle[n].idleSince) > p.idleTimeout {
		n++
	}
	if n == 0 {
		return nil
	}
	stale := append([]*conn(nil), p.idle[:n]...)
	p.idle = append(p.idle[:0], p.idle[n:]...)
	return stale
}

// Idle is how many connections wait in the pool.
func (p *Pool) Idle() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.idle)
}

// Close closes the idle connections.
func (p *Pool) Close() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range p.idle {
		c.Close()
	}
	p.idle = nil
}

func (p *Pool) head(c *conn, method, path, contentType string, body []byte, extra string) []byte {
	b := append(c.wbuf[:0], method...)
	b = append(b, ' ')
	b = append(b, p.prefix...)
	b = append(b, path...)
	b = append(b, " HTTP/1.1\r\nHost: "...)
	b = append(b, p.host...)
	b = append(b, "\r\nUser-Agent: bidbench-load\r\n"...)
	b = append(b, extra...)
	if body != nil {
		b = append(b, "Content-Type: "...)
		b = append(b, contentType...)
		b = append(b, "\r\nContent-Length: "...)
		b = strconv.AppendInt(b, int64(len(body)), 10)
		b = append(b, "\r\n"...)
	}
	b = append(b, "\r\n"...)
	if len(body) > 0 && len(b)+len(body) <= 16384 {
		b = append(b, body...)
	}
	c.wbuf = b
	return b
}

// Do sends one request and waits for its response until the deadline. extraHeaders are whole header
// lines ("X-Name: value\r\n"). A kept-alive connection the server closed while idle is replaced once.
func (p *Pool) Do(method, path, contentType string, body []byte, extraHeaders string, deadline time.Time, wantBody bool) Result {
	for attempt := 0; ; attempt++ {
		c, reused, err := p.get(deadline)
		if err != nil {
			return failure(err)
		}
		res, sent, err := p.exchange(c, method, path, contentType, body, extraHeaders, deadline, wantBody)
		if err == nil {
			return res
		}
		c.Close()
		// A connection closed by the server while idle fails before any response byte: the request was
		// never processed, so it is sent again on a new connection.
		if reused && attempt == 0 && !sent && staleConnection(err) {
			continue
		}
		return failure(err)
	}
}

func (p *Pool) exchange(c *conn, method, path, contentType string, body []byte, extra string, deadline time.Time, wantBody bool) (Result, bool, error) {
	if err := c.SetDeadline(deadline); err != nil {
		return Result{}, false, err
	}
	head := p.head(c, method, path, contentType, body, extra)
	if _, err := c.io.Write(head); err != nil {
		return Result{}, false, err
	}
	// A server may answer a body past its limit (413) and close before reading it: the write then
	// fails, but the answer is in the receive buffer, so it is still read.
	var bodyErr error
	if len(body) > 0 && len(head) < len(body) {
		_, bodyErr = c.io.Write(body)
	}
	if _, err := c.r.Peek(1); err != nil {
		return Result{}, bodyErr != nil, err
	}
	resp, err := http.ReadResponse(c.r, nil)
	if err != nil {
		return Result{}, true, err
	}
	res := Result{Status: resp.StatusCode, ServerTiming: resp.Header.Get("Server-Timing")}
	if wantBody {
		res.Body, err = io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	}
	if err == nil {
		_, err = io.Copy(io.Discard, resp.Body)
	}
	resp.Body.Close()
	if err != nil {
		return Result{}, true, err
	}
	if resp.Close || bodyErr != nil {
		c.Close()
	} else {
		p.put(c)
	}
	return res, true, nil
}

func staleConnection(err error) bool {
	return errors.Is(err, io.EOF) || errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE)
}

func failure(err error) Result {
	return Result{Err: Classify(err), Detail: err}
}

// Classify sorts a transport error into the classes the summary counts.
func Classify(err error) ErrorClass {
	var ne net.Error
	switch {
	case err == nil:
		return OK
	case errors.As(err, &ne) && ne.Timeout():
		return Timeout
	case errors.Is(err, syscall.ECONNREFUSED):
		return Refused
	case staleConnection(err) || errors.Is(err, io.ErrUnexpectedEOF):
		return Reset
	default:
		return Other
	}
}
