package main

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// longTest is a test function that calls longtest.Skip.
type longTest struct {
	dir  string // the package folder, relative to the module root, "." for the root
	name string
}

// findLongTests lists the Test and Fuzz functions of the module rooted at
// root whose body calls longtest.Skip: the tests CRAWLKEEPER_LONG turns on.
// Reading the source finds them without running anything, so the long
// step cannot miss a test that was gated after the list was written.
// Folders with a go.mod of their own (other modules), testdata and hidden
// folders are left out, as go test ./... leaves them out.
func findLongTests(root string) ([]longTest, error) {
	var out []longTest
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			name := d.Name()
			if path != root && (name == "testdata" || name == "vendor" || strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_")) {
				return filepath.SkipDir
			}
			if path != root {
				if _, err := os.Stat(filepath.Join(path, "go.mod")); err == nil {
					return filepath.SkipDir
				}
			}
			return nil
		}
		if !strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(root, filepath.Dir(path))
		if err != nil {
			return err
		}
		for _, decl := range f.Decls {
			fn, ok := decl.(*ast.FuncDecl)
			if !ok || fn.Recv != nil || fn.Body == nil || !(strings.HasPrefix(fn.Name.Name, "Test") || strings.HasPrefix(fn.Name.Name, "Fuzz")) {
				continue
			}
			if callsLongSkip(fn.Body) {
				out = append(out, longTest{dir: filepath.ToSlash(rel), name: fn.Name.Name})
			}
		}
		return nil
	})
	sort.Slice(out, func(i, j int) bool {
		if out[i].dir != out[j].dir {
			return out[i].dir < out[j].dir
		}
		return out[i].name < out[j].name
	})
	return out, err
}

func callsLongSkip(body *ast.BlockStmt) bool {
	found := false
	ast.Inspect(body, func(n ast.Node) bool {
		call, ok := n.(*ast.CallExpr)
		if !ok {
			return !found
		}
		if sel, ok := call.Fun.(*ast.SelectorExpr); ok && sel.Sel.Name == "Skip" {
			if id, ok := sel.X.(*ast.Ident); ok && id.Name == "longtest" {
				found = true
			}
		}
		return !found
	})
	return found
}

// selectPackages keeps the long tests in the packages that patterns name
// (./... when none): "./dir" is one package, "./dir/..." a tree.
func selectPackages(tests []longTest, patterns []string) []longTest {
	if len(patterns) == 0 {
		return tests
	}
	var out []longTest
	for _, t := range tests {
		for _, p := range patterns {
			p = strings.TrimSuffix(strings.TrimPrefix(filepath.ToSlash(filepath.Clean(p)), "./"), "/")
			if tree, ok := strings.CutSuffix(p, "..."); ok {
				tree = strings.TrimSuffix(tree, "/")
				if tree == "" || tree == "." || t.dir == tree || strings.HasPrefix(t.dir, tree+"/") {
					out = append(out, t)
					break
				}
			} else if t.dir == p {
				out = append(out, t)
				break
			}
		}
	}
	return out
}

// longArgs turns go test arguments into those of the long run, which
// runs in the module root (root) from the folder wd: only the long tests of
// the packages asked for (./... when none), each package named once, with
// one -run pattern (a name shared by a test of another selected package
// runs there too, which costs time and misses nothing).
func longArgs(root, wd string, args []string) ([]string, error) {
	var flags, patterns []string
	for _, a := range args {
		switch {
		case a == "-run" || strings.HasPrefix(a, "-run=") || a == "--run" || strings.HasPrefix(a, "--run="):
			return nil, fmt.Errorf("-long picks the tests itself: leave -run out")
		case strings.HasPrefix(a, "."):
			rel, err := filepath.Rel(root, filepath.Join(wd, a))
			if err != nil || strings.HasPrefix(rel, "..") {
				return nil, fmt.Errorf("package %s is outside the module in %s", a, root)
			}
			patterns = append(patterns, rel)
		default:
			flags = append(flags, a)
		}
	}
	if len(patterns) == 0 {
		rel, err := filepath.Rel(root, filepath.Join(wd, "..."))
		if err != nil {
			return nil, err
		}
		patterns = []string{rel}
	}
	tests, err := findLongTests(root)
	if err != nil {
		return nil, err
	}
	tests = selectPackages(tests, patterns)
	if len(tests) == 0 {
		return nil, fmt.Errorf("no long tests (tests that call longtest.Skip) in %s", strings.Join(patterns, " "))
	}
	var names, pkgs []string
	seenName, seenPkg := map[string]bool{}, map[string]bool{}
	for _, t := range tests {
		if !seenName[t.name] {
			seenName[t.name] = true
			names = append(names, t.name)
		}
		if !seenPkg[t.dir] {
			seenPkg[t.dir] = true
			if t.dir == "." {
				pkgs = append(pkgs, ".")
			} else {
				pkgs = append(pkgs, "./"+t.dir)
			}
		}
	}
	sort.Strings(names)
	out := append(flags, "-run", "^("+strings.Join(names, "|")+")$")
	return append(out, pkgs...), nil
}
