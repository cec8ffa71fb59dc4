package main

import (
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"sync"
	"time"
)

// freeAddr returns a loopback address with a port nothing listens on.
func freeAddr() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer ln.Close()
	return ln.Addr().String(), nil
}

// proxy accepts MongoDB clients on ln and relays each of their
// connections to its own connection to backend, holding one lock from the
// moment a request is sent until its reply is read, so the backend runs
// one command at a time.
func proxy(ln net.Listener, backend string) error {
	var one sync.Mutex
	for {
		c, err := ln.Accept()
		if err != nil {
			return nil // closed on shutdown
		}
		go func() {
			defer c.Close()
			b, err := dialRetry(backend)
			if err != nil {
				return
			}
			defer b.Close()
			relay(c, b, &one)
		}()
	}
}

// dialRetry connects to the backend, which may still be starting.
func dialRetry(addr string) (net.Conn, error) {
	var err error
	for i := 0; i < 100; i++ {
		var c net.Conn
		if c, err = net.Dial("tcp", addr); err == nil {
			return c, nil
		}
		time.Sleep(100 * time.Millisecond)
	}
	return nil, err
}

// opMsg is the wire protocol's OP_MSG opcode; its flag bit 1, moreToCome,
// marks a request that gets no reply.
const (
	opMsg      = 2013
	moreToCome = 1 << 1
)

// relay passes requests from c to b and replies back, one at a time.
func relay(c, b net.Conn, one *sync.Mutex) {
	for {
		req, err := readMessage(c)
		if err != nil {
			return
		}
		noReply := binary.LittleEndian.Uint32(req[12:16]) == opMsg && len(req) >= 20 &&
			binary.LittleEndian.Uint32(req[16:20])&moreToCome != 0
		one.Lock()
		_, err = b.Write(req)
		var rep []byte
		if err == nil && !noReply {
			rep, err = readMessage(b)
		}
		one.Unlock()
		if err != nil {
			return
		}
		if rep != nil {
			if _, err := c.Write(rep); err != nil {
				return
			}
		}
	}
}

// readMessage reads one wire protocol message: a little-endian int32
// length that counts itself, then the rest.
func readMessage(r io.Reader) ([]byte, error) {
	var head [4]byte
	if _, err := io.ReadFull(r, head[:]); err != nil {
		return nil, err
	}
	n := binary.LittleEndian.Uint32(head[:])
	if n < 16 || n > 64<<20 {
		return nil, fmt.Errorf("message length %d out of range", n)
	}
	msg := make([]byte, n)
	copy(msg, head[:])
	if _, err := io.ReadFull(r, msg[4:]); err != nil {
		return nil, err
	}
	return msg, nil
}
