package main

import (
	"go/ast"
	"slices"
	"sort"
)

// interfaceMethods are the exported methods that a package outside this
// module calls through an interface (fmt, errors, sort, encoding, client-go,
// CoreDNS, apimachinery), where no selector of ours spells them.
var interfaceMethods = map[string]bool{
	"String": true, "Error": true, "Unwrap": true, "Is": true, "As": true, "Format": true, "GoString": true,
	"Len": true, "Less": true, "Swap": true, "Push": true, "Pop": true,
	"MarshalJSON": true, "UnmarshalJSON": true, "MarshalText": true, "UnmarshalText": true,
	"ServeDNS": true, "Name": true, "Ready": true, "OnStartup": true, "OnShutdown": true,
	"OnAdd": true, "OnUpdate": true, "OnDelete": true,
	"DeepCopyObject": true, "GetObjectKind": true,
	"Describe": true, "Collect": true, "Read": true, "Write": true, "Close": true,
	// dns.ResponseWriter, CoreDNS's transfer.Transferer, apimachinery's
	// watch.Interface and metav1.Object.
	"WriteMsg": true, "Transfer": true, "ResultChan": true, "SetCreationTimestamp": true,
}

// testOnlyMembers returns the exported methods and struct fields declared in
// dir's production files (of its exported and unexported types alike) that
// some test spells but no production file of another package does: members
// exported only for tests. Members are matched by name, so a member whose
// name another type's member shares in production elsewhere counts as used:
// the check errs on the side of silence.
func testOnlyMembers(files []file, dir string) []string {
	members := map[string]string{} // member name → "Type.Name" of its first declaration
	// Fields declared in one line (Continent, Country, Region string) are
	// one group, as the constants of one block are: one in use keeps all.
	var groups [][]string
	prodDecls(files, dir, func(d ast.Decl) {
		switch d := d.(type) {
		case *ast.FuncDecl:
			if d.Recv != nil && d.Name.IsExported() && !interfaceMethods[d.Name.Name] {
				if _, ok := members[d.Name.Name]; !ok {
					members[d.Name.Name] = recvName(d.Recv.List[0].Type) + "." + d.Name.Name
				}
			}
		case *ast.GenDecl:
			for _, spec := range d.Specs {
				ts, ok := spec.(*ast.TypeSpec)
				if !ok {
					continue
				}
				st, ok := ts.Type.(*ast.StructType)
				if !ok {
					continue
				}
				for _, field := range st.Fields.List {
					if field.Tag != nil {
						continue // encoded by name
					}
					var group []string
					for _, n := range field.Names {
						if _, ok := members[n.Name]; n.IsExported() && !ok {
							members[n.Name] = ts.Name.Name + "." + n.Name
							group = append(group, n.Name)
						}
					}
					if len(group) > 1 {
						groups = append(groups, group)
					}
				}
			}
		}
	})
	prodOutside, test := map[string]bool{}, map[string]bool{}
	for _, f := range files {
		into := test
		if !f.test {
			if f.dir == dir {
				continue
			}
			into = prodOutside
		}
		ast.Inspect(f.ast, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.SelectorExpr:
				into[n.Sel.Name] = true
			case *ast.KeyValueExpr:
				if id, ok := n.Key.(*ast.Ident); ok {
					into[id.Name] = true
				}
			}
			return true
		})
	}
	for _, g := range groups {
		if slices.ContainsFunc(g, func(n string) bool { return prodOutside[n] }) {
			for _, n := range g {
				prodOutside[n] = true
			}
		}
	}
	var out []string
	for name, id := range members {
		if test[name] && !prodOutside[name] {
			out = append(out, label(dir)+"."+id)
		}
	}
	sort.Strings(out)
	return out
}

// recvName returns the name of a method's receiver type.
func recvName(e ast.Expr) string {
	switch e := e.(type) {
	case *ast.StarExpr:
		return recvName(e.X)
	case *ast.IndexExpr:
		return recvName(e.X)
	case *ast.IndexListExpr:
		return recvName(e.X)
	case *ast.Ident:
		return e.Name
	}
	return "?"
}
