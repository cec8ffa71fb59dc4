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
// connections to its own connection to backend. For a write command it
// holds one lock from the moment the request is sent until its reply is
// read, so the backend runs one write at a time; other commands pass
// freely (a read sees a document before or after a write, and a monitor's
// hello may wait for seconds by design).
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
		write := writes[commandName(req)]
		if write {
			one.Lock()
		}
		_, err = b.Write(req)
		var rep []byte
		if err == nil && !noReply {
			rep, err = readMessage(b)
		}
		if write {
			one.Unlock()
		}
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

// writes are the commands that change documents.
var writes = map[string]bool{"insert": true, "update": true, "delete": true, "findAndModify": true, "findandmodify": true}

// commandName returns the name of an OP_MSG's command: the first key of
// its body section (kind 0). Other messages and odd ones give "".
func commandName(msg []byte) string {
	if len(msg) < 21 || binary.LittleEndian.Uint32(msg[12:16]) != opMsg {
		return ""
	}
	p := msg[20:]
	for len(p) > 0 {
		kind := p[0]
		p = p[1:]
		if len(p) < 4 {
			return ""
		}
		n := int(binary.LittleEndian.Uint32(p[:4]))
		if n < 5 || n > len(p) {
			return ""
		}
		if kind == 0 {
			// A BSON document: int32 length, then elements of a type
			// byte, a NUL-terminated key and a value.
			doc := p[4:n]
			if len(doc) < 2 {
				return ""
			}
			key := doc[1:]
			for i, c := range key {
				if c == 0 {
					return string(key[:i])
				}
			}
			return ""
		}
		p = p[n:] // a document sequence: int32 size counts itself
	}
	return ""
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
