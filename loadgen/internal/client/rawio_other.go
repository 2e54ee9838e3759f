//go:build !linux

package client

import (
	"io"
	"net"
)

func newRawIO(c net.Conn) io.ReadWriter { return c }
