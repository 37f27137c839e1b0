// Command testexports lists the exported identifiers of the module's packages
// that no production file of another package uses but some test does: names
// exported only for tests, which should be unexported once the tests live
// beside their code. It checks top-level names and the methods and fields of
// the packages' types (members.go). The types of exported fields and
// signatures, and the constants of a group production uses, count as used
// (see api).
//
// It checks every package of the module but those under cmd/, test/ and
// hack/ and the test support packages (named *test or *testutil, like
// net/http/httptest), or the directories given. The baseline file lists,
// one "dir.Name" a line (the root package as "(root)"), the names still
// allowed; it may only shrink: a name it does not list fails, and so does a
// line that names no test-only export any more (-prune removes those).
//
// Usage: go run ./hack/testexports [-baseline FILE [-prune]] [-list] [DIR...]
package main

import (
	"bufio"
	"flag"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
)

const module = "github.com/seed-e581d630/k8s_gateway"

func main() {
	baseline := flag.String("baseline", "", "file of the names still allowed, one dir.Name a line")
	prune := flag.Bool("prune", false, "remove the baseline's lines that name no test-only export any more")
	list := flag.Bool("list", false, "print every test-only export found")
	flag.Parse()
	files := parseModule()
	dirs := flag.Args()
	if len(dirs) == 0 {
		dirs = packages(files)
	}
	found := find(files, dirs)
	if *list {
		for _, id := range found {
			fmt.Println(id)
		}
	}
	if *baseline == "" {
		if len(found) > 0 {
			fmt.Fprintf(os.Stderr, "exported only for tests (unexport them): %s\n", strings.Join(found, " "))
			os.Exit(1)
		}
		return
	}
	text, err := os.ReadFile(*baseline)
	if err != nil {
		fatal(err)
	}
	unlisted, stale := compare(found, baselineNames(string(text)))
	if *prune && len(stale) > 0 {
		if err := os.WriteFile(*baseline, []byte(without(string(text), stale)), 0o644); err != nil {
			fatal(err)
		}
		fmt.Fprintf(os.Stderr, "testexports: removed from %s: %s\n", *baseline, strings.Join(stale, " "))
		stale = nil
	}
	if len(unlisted) > 0 {
		fmt.Fprintf(os.Stderr, "testexports: exported only for tests (unexport them; the baseline %s may only shrink): %s\n", *baseline, strings.Join(unlisted, " "))
	}
	if len(stale) > 0 {
		fmt.Fprintf(os.Stderr, "testexports: %s lists names that are no longer test-only exports (remove them, or run go run ./hack/testexports -baseline %[1]s -prune): %s\n", *baseline, strings.Join(stale, " "))
	}
	if len(unlisted) > 0 || len(stale) > 0 {
		os.Exit(1)
	}
}

// baselineNames returns the names a baseline file lists: its lines but
// blank ones and # comments.
func baselineNames(text string) []string {
	var names []string
	sc := bufio.NewScanner(strings.NewReader(text))
	for sc.Scan() {
		if l := strings.TrimSpace(sc.Text()); l != "" && !strings.HasPrefix(l, "#") {
			names = append(names, l)
		}
	}
	return names
}

// without returns the baseline text without the lines naming names.
func without(text string, names []string) string {
	var out []string
	for _, l := range strings.SplitAfter(text, "\n") {
		if !slices.Contains(names, strings.TrimSpace(l)) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "")
}

// compare returns the names found that the baseline does not list, and the
// baseline's names that were not found, both sorted.
func compare(found, baseline []string) (unlisted, stale []string) {
	for _, id := range found {
		if !slices.Contains(baseline, id) {
			unlisted = append(unlisted, id)
		}
	}
	for _, id := range baseline {
		if !slices.Contains(found, id) {
			stale = append(stale, id)
		}
	}
	sort.Strings(stale)
	return unlisted, stale
}

// packages returns the directories of the packages to check: every package
// of the module with a production file, but those under cmd/ (test/ and
// hack/ are not parsed) and the test support packages, named *test or
// *testutil, whose exports exist for tests.
func packages(files []file) []string {
	seen := map[string]bool{}
	for _, f := range files {
		name := f.ast.Name.Name
		if f.test || f.dir == "cmd" || strings.HasPrefix(f.dir, "cmd"+string(filepath.Separator)) ||
			name == "main" || strings.HasSuffix(name, "test") || strings.HasSuffix(name, "testutil") {
			continue
		}
		seen[filepath.ToSlash(f.dir)] = true
	}
	dirs := make([]string, 0, len(seen))
	for d := range seen {
		dirs = append(dirs, d)
	}
	sort.Strings(dirs)
	return dirs
}

// public are the names exported for programs outside the module: the
// plugin's handler, exported as CoreDNS's plugins export theirs
// (file.File, kubernetes.Kubernetes).
var public = map[string]bool{"(root).Gateway": true}

// label is how dir's names are written: "dir.Name", the root's "(root).Name".
func label(dir string) string {
	if dir == "." {
		return "(root)"
	}
	return dir
}

// importPath is the import path of the package in dir.
func importPath(dir string) string {
	if dir == "." {
		return module
	}
	return module + "/" + filepath.ToSlash(dir)
}

// find returns, sorted, the names of the packages in dirs that only tests
// use: top-level names as "dir.Name", members as "dir.Type.Name" (see label).
func find(files []file, dirs []string) []string {
	var found []string
	for _, dir := range dirs {
		dir = path.Clean(dir)
		names := exported(files, dir)
		prod, test := uses(files, dir)
		api(files, dir, prod)
		for _, n := range names {
			if id := label(dir) + "." + n; !prod[n] && test[n] && !public[id] {
				found = append(found, id)
			}
		}
		found = append(found, testOnlyMembers(files, dir)...)
	}
	sort.Strings(found)
	return found
}

type file struct {
	dir  string
	test bool
	ast  *ast.File
}

// parseModule parses every Go file of the module but those under test/ and
// hack/ (and testdata, as the go command skips it).
func parseModule() []file {
	var out []file
	fset := token.NewFileSet()
	err := filepath.WalkDir(".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if p != "." && (strings.HasPrefix(d.Name(), ".") || strings.HasPrefix(d.Name(), "_") || d.Name() == "testdata" ||
				p == "test" || p == "hack" || p == "charts" || p == "docs") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(p, ".go") {
			return nil
		}
		f, err := parser.ParseFile(fset, p, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		out = append(out, file{dir: filepath.Dir(p), test: strings.HasSuffix(p, "_test.go"), ast: f})
		return nil
	})
	if err != nil {
		fatal(err)
	}
	return out
}

// prodDecls calls fn with every top-level declaration of the production
// files of the package in dir.
func prodDecls(files []file, dir string, fn func(ast.Decl)) {
	for _, f := range files {
		if f.dir == dir && !f.test {
			for _, d := range f.ast.Decls {
				fn(d)
			}
		}
	}
}

// exported returns the exported top-level names of the package in dir.
func exported(files []file, dir string) []string {
	seen := map[string]bool{}
	prodDecls(files, dir, func(d ast.Decl) {
		switch d := d.(type) {
		case *ast.FuncDecl:
			if d.Recv == nil && d.Name.IsExported() {
				seen[d.Name.Name] = true
			}
		case *ast.GenDecl:
			for _, s := range d.Specs {
				switch s := s.(type) {
				case *ast.TypeSpec:
					if s.Name.IsExported() {
						seen[s.Name.Name] = true
					}
				case *ast.ValueSpec:
					for _, n := range s.Names {
						if n.IsExported() {
							seen[n.Name] = true
						}
					}
				}
			}
		}
	})
	names := make([]string, 0, len(seen))
	for n := range seen {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// uses returns the names of dir's package that production files of other
// packages use (prod) and that any test uses (test): its own tests by name,
// other packages' tests through the import.
func uses(files []file, dir string) (prod, test map[string]bool) {
	prod, test = map[string]bool{}, map[string]bool{}
	importPath := importPath(dir)
	for _, f := range files {
		if f.dir == dir {
			if f.test && !strings.HasSuffix(f.ast.Name.Name, "_test") {
				ast.Inspect(f.ast, func(n ast.Node) bool {
					if id, ok := n.(*ast.Ident); ok {
						test[id.Name] = true
					}
					return true
				})
				continue
			}
			if !f.test {
				continue
			}
		}
		local := ""
		for _, imp := range f.ast.Imports {
			p, _ := strconv.Unquote(imp.Path.Value)
			if p != importPath {
				continue
			}
			local = path.Base(p)
			if imp.Name != nil {
				local = imp.Name.Name
			}
		}
		if local == "" {
			continue
		}
		ast.Inspect(f.ast, func(n ast.Node) bool {
			sel, ok := n.(*ast.SelectorExpr)
			if !ok {
				return true
			}
			if x, ok := sel.X.(*ast.Ident); ok && x.Name == local {
				if f.test {
					test[sel.Sel.Name] = true
				} else {
					prod[sel.Sel.Name] = true
				}
			}
			return true
		})
	}
	return prod, test
}

// api marks as used in production the names that belong to the package's API
// although no other package spells them: the types of its exported fields
// and of its exported functions' parameters and results (an exported field
// of an unexported type would be worse), and every constant of a group that
// production uses (one value of an enumeration is part of it).
func api(files []file, dir string, prod map[string]bool) {
	markTypes := func(n ast.Node) {
		ast.Inspect(n, func(n ast.Node) bool {
			if id, ok := n.(*ast.Ident); ok && id.IsExported() {
				prod[id.Name] = true
			}
			return true
		})
	}
	for _, f := range files {
		if f.dir != dir || f.test {
			continue
		}
		for _, d := range f.ast.Decls {
			switch d := d.(type) {
			case *ast.FuncDecl:
				if d.Name.IsExported() {
					markTypes(d.Type)
				}
			case *ast.GenDecl:
				for _, spec := range d.Specs {
					if ts, ok := spec.(*ast.TypeSpec); ok && ts.Name.IsExported() {
						if st, ok := ts.Type.(*ast.StructType); ok {
							for _, field := range st.Fields.List {
								if len(field.Names) > 0 && field.Names[0].IsExported() {
									markTypes(field.Type)
								}
							}
						}
					}
				}
				if d.Tok != token.CONST {
					continue
				}
				var group []string
				used := false
				for _, spec := range d.Specs {
					for _, n := range spec.(*ast.ValueSpec).Names {
						group = append(group, n.Name)
						used = used || prod[n.Name]
					}
				}
				if used {
					for _, n := range group {
						prod[n] = true
					}
				}
			}
		}
	}
}

func fatal(err error) {
	fmt.Fprintln(os.Stderr, "testexports:", err)
	os.Exit(2)
}
