package service

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
)

// controlHelper is the other local user in TestControlSocketTwoUsers; it
// runs in a copy of the test binary started as that user and reports on
// stdout, one line per step.
func controlHelper(mode, path string) int {
	switch mode {
	case "squat":
		// Pre-create the victim's socket folder and serve a fake socket,
		// as an attacker would with /tmp/herald-UID.
		dir := filepath.Dir(path)
		if err := os.Mkdir(dir, 0o700); err != nil {
			fmt.Println("error:", err)
			return 1
		}
		ln, err := net.Listen("unix", path)
		if err != nil {
			fmt.Println("error:", err)
			return 1
		}
		defer ln.Close()
		os.Chmod(path, 0o600)
		fmt.Println("ready")
		c, err := ln.Accept()
		if err != nil {
			fmt.Println("error:", err)
			return 1
		}
		// Read what the victim sends, until it hangs up.
		n, _ := io.Copy(io.Discard, c)
		c.Close()
		fmt.Printf("received %d bytes\n", n)
		return 0
	case "client":
		// Talk to another user's Herald.
		c, err := net.Dial("unix", path)
		if err != nil {
			fmt.Println("dial error:", err)
			return 0
		}
		defer c.Close()
		fmt.Fprintln(c, `{"op":"pending"}`)
		fmt.Fprintln(c, `{"op":"approve","key":"`+os.Getenv("HERALD_CONTROL_KEY")+`","choice":"once"}`)
		sc := bufio.NewScanner(c)
		for sc.Scan() {
			fmt.Println("reply:", sc.Text())
		}
		fmt.Println("closed")
		return 0
	}
	fmt.Println("unknown helper mode", mode)
	return 2
}
