// Command pss sums the proportional set size (PSS) of a group of processes
// as if they ran alone. scripts/footprint.sh uses it: the kernel's PSS
// splits a shared page among every process on the machine that maps it, so
// other WebKit processes (tests, another Herald, a browser) and other X
// servers (which map Mesa's libLLVM too) lower Herald's figure by tens of
// MiB, and by a different amount at each run.
//
// Each resident page of the group (its frame number from
// /proc/PID/pagemap, which needs root) counts 1/n, where n is how many times
// the group and the -with processes (Herald's own X server and session
// bus) map it: the kernel's PSS on a machine where nothing else runs.
// Without root it prints the kernel's PSS (smaps_rollup) and says so.
//
//	go run ./scripts/pss -group 12,13,14 -with 20,21 [-by-file 12]
//
// Output: one line per process, "pid name pss_kib rss_kib anon_kib", then
// "total pss_kib rss_kib alone|kernel [anon_kib]". anon_kib is the part of
// the PSS that is no file's: heaps, stacks, JavaScript, shared memory;
// the rest is the programs and libraries, their code and the data the
// loader relocated, which no setting of WebKit's changes. -by-file PIDS adds, after each of
// those processes' line, the PSS of its mappings summed by file, largest
// first ("map KiB path").
package main

import (
	"bufio"
	"encoding/binary"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
)

const pageKiB = 4

type mapping struct {
	start, end uint64
	path       string
	rssKiB     uint64
}

func main() {
	group := flag.String("group", "", "comma-separated pids to measure")
	with := flag.String("with", "", "comma-separated pids that share pages with the group but are not measured")
	byFile := flag.String("by-file", "", "comma-separated pids whose PSS to print by mapped file too")
	flag.Parse()
	if err := run(os.Stdout, pids(*group), pids(*with), pids(*byFile)); err != nil {
		fmt.Fprintln(os.Stderr, "pss:", err)
		os.Exit(1)
	}
}

func pids(s string) []int {
	var out []int
	for _, f := range strings.Split(s, ",") {
		if n, err := strconv.Atoi(strings.TrimSpace(f)); err == nil {
			out = append(out, n)
		}
	}
	return out
}

func run(w io.Writer, group, with, byFile []int) error {
	if len(group) == 0 {
		return errors.New("no -group pids")
	}
	// How many times the group and the -with processes map each page.
	maps := map[uint64]uint32{}
	frames := false
	for _, p := range append(append([]int{}, group...), with...) {
		err := walk(p, func(pfn uint64, _ *mapping) {
			maps[pfn]++
			frames = frames || pfn != 0
		})
		if err != nil {
			return fmt.Errorf("pid %d: %w", p, err)
		}
	}
	if !frames { // not root: pagemap hides frame numbers
		return kernelPSS(w, group)
	}
	var totPSS, totRSS, totAnon float64
	for _, p := range group {
		files := map[string]float64{}
		var pss, rss, anon float64
		err := walk(p, func(pfn uint64, m *mapping) {
			share := pageKiB / float64(max(maps[pfn], 1))
			pss += share
			if !fileBacked(m.path) {
				anon += share
			}
			rss += pageKiB
			if slices.Contains(byFile, p) {
				files[m.path] += share
			}
		})
		if err != nil {
			return fmt.Errorf("pid %d: %w", p, err)
		}
		fmt.Fprintf(w, "%d %s %.0f %.0f %.0f\n", p, name(p), pss, rss, anon)
		totAnon += anon
		totPSS += pss
		totRSS += rss
		if slices.Contains(byFile, p) {
			printFiles(w, files)
		}
	}
	fmt.Fprintf(w, "total %.0f %.0f alone %.0f\n", totPSS, totRSS, totAnon)
	return nil
}

// kernelPSS is the fallback without root: the kernel's PSS, which the
// other processes' sharing lowers.
func kernelPSS(w io.Writer, group []int) error {
	var totPSS, totRSS, totAnon float64
	for _, p := range group {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/smaps_rollup", p))
		if err != nil {
			return err
		}
		// Pss_Anon leaves out shared memory (Pss_Shmem), which the
		// exact count includes: close enough for a fallback.
		pss, rss, anon := field(b, "Pss:"), field(b, "Rss:"), field(b, "Pss_Anon:")
		fmt.Fprintf(w, "%d %s %.0f %.0f %.0f\n", p, name(p), pss, rss, anon)
		totAnon += anon
		totPSS += pss
		totRSS += rss
	}
	fmt.Fprintf(w, "total %.0f %.0f kernel %.0f\n", totPSS, totRSS, totAnon)
	return nil
}

func field(b []byte, key string) float64 {
	for _, l := range strings.Split(string(b), "\n") {
		if f := strings.Fields(l); len(f) >= 2 && f[0] == key {
			v, _ := strconv.ParseFloat(f[1], 64)
			return v
		}
	}
	return 0
}

// fileBacked reports whether a mapping (smaps' path column) is a file's
// rather than memory of the process's own: [heap], [stack], [anon],
// System V or POSIX shared memory, memfd.
func fileBacked(path string) bool {
	switch {
	case strings.HasPrefix(path, "["), strings.HasPrefix(path, "/SYSV"), strings.HasPrefix(path, "/memfd:"),
		strings.HasPrefix(path, "/dev/shm/"), strings.HasPrefix(path, "/dev/zero"):
		return false
	}
	return true
}

func printFiles(w io.Writer, files map[string]float64) {
	type kv struct {
		path string
		kib  float64
	}
	var all []kv
	for p, k := range files {
		all = append(all, kv{p, k})
	}
	sort.Slice(all, func(i, j int) bool { return all[i].kib > all[j].kib })
	for _, e := range all {
		if e.kib >= 256 {
			fmt.Fprintf(w, "map %.0f %s\n", e.kib, e.path)
		}
	}
}

func name(p int) string {
	b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", p))
	args := strings.Split(strings.TrimRight(string(b), "\x00"), "\x00")
	if len(args) == 0 || args[0] == "" {
		return "?"
	}
	n := filepath.Base(args[0])
	for _, a := range args[1:] {
		if a == "--window" {
			return n + "-window"
		}
	}
	return n
}

// walk calls f for every resident page of pid's mappings that have any
// (by smaps' Rss), with the page's frame number.
func walk(pid int, f func(pfn uint64, m *mapping)) error {
	maps, err := residentMappings(pid)
	if err != nil {
		return err
	}
	pm, err := os.Open(fmt.Sprintf("/proc/%d/pagemap", pid))
	if err != nil {
		return err
	}
	defer pm.Close()
	buf := make([]byte, 0, 8*4096)
	for i := range maps {
		m := &maps[i]
		pages := (m.end - m.start) / 4096
		for first := uint64(0); first < pages; first += 4096 {
			n := min(pages-first, 4096)
			buf = buf[:8*n]
			if _, err := pm.ReadAt(buf, int64((m.start/4096+first)*8)); err != nil {
				return err
			}
			for j := uint64(0); j < n; j++ {
				e := binary.LittleEndian.Uint64(buf[8*j:])
				if e&(1<<63) == 0 { // not present
					continue
				}
				f(e&((1<<55)-1), m)
			}
		}
	}
	return nil
}

func residentMappings(pid int) ([]mapping, error) {
	fh, err := os.Open(fmt.Sprintf("/proc/%d/smaps", pid))
	if err != nil {
		return nil, err
	}
	defer fh.Close()
	var out []mapping
	sc := bufio.NewScanner(fh)
	sc.Buffer(make([]byte, 64*1024), 1024*1024)
	for sc.Scan() {
		l := sc.Text()
		f := strings.Fields(l)
		if len(f) == 0 {
			continue
		}
		if strings.HasSuffix(f[0], ":") {
			if f[0] == "Rss:" && len(out) > 0 {
				out[len(out)-1].rssKiB, _ = strconv.ParseUint(f[1], 10, 64)
			}
			continue
		}
		// A mapping's header: start-end perms offset dev inode [path].
		se := strings.SplitN(f[0], "-", 2)
		if len(se) != 2 {
			continue
		}
		s, err1 := strconv.ParseUint(se[0], 16, 64)
		e, err2 := strconv.ParseUint(se[1], 16, 64)
		if err1 != nil || err2 != nil {
			continue
		}
		path := "[anon]"
		if len(f) >= 6 {
			path = strings.Join(f[5:], " ")
		}
		out = append(out, mapping{start: s, end: e, path: path})
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	res := out[:0]
	for _, m := range out {
		if m.rssKiB > 0 {
			res = append(res, m)
		}
	}
	return res, nil
}
