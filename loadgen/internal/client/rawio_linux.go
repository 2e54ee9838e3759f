package client

import (
	"io"
	"net"
	"syscall"
	"unsafe"
)

// rawIO reads and writes a connection's non-blocking socket with RawSyscall, through the poller
// (syscall.RawConn) for readiness and deadlines. A plain conn.Read or Write enters the runtime's syscall
// state, and the first syscall after the process has been idle wakes the sysmon thread from its deep
// sleep (it then polls every 20 µs for a while) and may hand the P to another thread: at 1000 req/s
// that was about two extra wake-ups per request. A non-blocking socket never blocks, so the syscall
// state buys nothing here.
type rawIO struct {
	net.Conn
	rc syscall.RawConn
}

func newRawIO(c net.Conn) io.ReadWriter {
	sc, ok := c.(syscall.Conn)
	if !ok {
		return c
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return c
	}
	return &rawIO{Conn: c, rc: rc}
}

func (r *rawIO) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	var n uintptr
	var errno syscall.Errno
	err := r.rc.Read(func(fd uintptr) bool {
		for {
			n, _, errno = syscall.RawSyscall(syscall.SYS_READ, fd, uintptr(unsafe.Pointer(&p[0])), uintptr(len(p)))
			if errno != syscall.EINTR {
				return errno != syscall.EAGAIN
			}
		}
	})
	switch {
	case err != nil:
		return 0, err
	case errno != 0:
		return 0, errno
	case n == 0:
		return 0, io.EOF
	}
	return int(n), nil
}

func (r *rawIO) Write(p []byte) (int, error) {
	written := 0
	var errno syscall.Errno
	err := r.rc.Write(func(fd uintptr) bool {
		for written < len(p) {
			n, _, e := syscall.RawSyscall(syscall.SYS_WRITE, fd, uintptr(unsafe.Pointer(&p[written])), uintptr(len(p)-written))
			switch e {
			case 0:
				written += int(n)
			case syscall.EINTR:
			case syscall.EAGAIN:
				return false
			default:
				errno = e
				return true
			}
		}
		return true
	})
	if err != nil {
		return written, err
	}
	if errno != 0 {
		return written, errno
	}
	return written, nil
}
