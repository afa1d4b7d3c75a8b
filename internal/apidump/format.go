package main

import (
	"fmt"
	"go/constant"
	"go/types"
	"strings"
)

// writer writes types as the API file does: names of other packages
// qualified by their package name, parameter names left out (they are not
// API).
type writer struct {
	pkg *types.Package
	// reexport maps a type of an internal package that pkg re-exports
	// under an alias to the alias's name: such a type is written as if
	// pkg declared it (its fields and methods are pkg's API, and users
	// can name it only through the alias).
	reexport map[*types.TypeName]string
}

// newWriter returns the writer of p, with p's aliases of internal types.
func newWriter(p *types.Package) writer {
	w := writer{pkg: p, reexport: map[*types.TypeName]string{}}
	scope := p.Scope()
	for _, name := range scope.Names() {
		if o, ok := scope.Lookup(name).(*types.TypeName); ok && o.Exported() {
			if n := internalTarget(o); n != nil {
				w.reexport[n.Obj()] = o.Name()
			}
		}
	}
	return w
}

// internalTarget returns the type an alias o names when that is a
// non-generic type declared in an internal package, or nil.
func internalTarget(o *types.TypeName) *types.Named {
	a, ok := o.Type().(*types.Alias)
	if !ok || a.TypeParams().Len() > 0 {
		return nil
	}
	n, ok := types.Unalias(a).(*types.Named)
	if !ok || n.TypeParams().Len() > 0 || n.Obj().Pkg() == nil {
		return nil
	}
	for _, seg := range strings.Split(n.Obj().Pkg().Path(), "/") {
		if seg == "internal" {
			return n
		}
	}
	return nil
}

// constant returns "const N = V" (untyped) or "const N T = V".
func (w writer) constant(c *types.Const) string {
	v := c.Val().ExactString()
	if c.Val().Kind() == constant.Float {
		v = c.Val().String()
	}
	if b, ok := c.Type().(*types.Basic); ok && b.Info()&types.IsUntyped != 0 {
		return "const " + c.Name() + " = " + v
	}
	return "const " + c.Name() + " " + w.typ(c.Type()) + " = " + v
}

// typeName returns the lines of a declared type: its header, its exported
// fields or interface methods, its exported methods.
func (w writer) typeName(o *types.TypeName) []string {
	named, ok := o.Type().(*types.Named)
	if n := internalTarget(o); n != nil {
		named, ok = n, true // written as declared here
	} else if a, isAlias := o.Type().(*types.Alias); isAlias {
		return []string{"type " + o.Name() + w.typeParams(a.TypeParams()) + " = " + w.typ(a.Rhs())}
	}
	if !ok { // an alias without types.Alias nodes
		return []string{"type " + o.Name() + " = " + w.typ(o.Type())}
	}
	name := o.Name()
	head := "type " + name + w.typeParams(named.TypeParams())
	var lines []string
	switch u := named.Underlying().(type) {
	case *types.Struct:
		lines = append(lines, head+" struct")
		for i := range u.NumFields() {
			f := u.Field(i)
			switch {
			case !f.Exported():
			case f.Embedded():
				lines = append(lines, "type "+name+" struct, embedded "+w.typ(f.Type()))
			default:
				lines = append(lines, "type "+name+" struct, "+f.Name()+" "+w.typ(f.Type()))
			}
		}
	case *types.Interface:
		lines = append(lines, head+" interface")
		unexported := false
		for i := range u.NumMethods() {
			m := u.Method(i)
			if !m.Exported() {
				unexported = true
				continue
			}
			lines = append(lines, "type "+name+" interface, "+m.Name()+w.signature(m.Type().(*types.Signature)))
		}
		if unexported {
			lines = append(lines, "type "+name+" interface, unexported methods")
		}
		for i := range u.NumEmbeddeds() {
			if e := u.EmbeddedType(i); !types.IsInterface(e) {
				lines = append(lines, "type "+name+" interface, "+w.typ(e))
			}
		}
	default:
		lines = append(lines, head+" "+w.typ(u))
	}
	for i := range named.NumMethods() {
		m := named.Method(i)
		if !m.Exported() {
			continue
		}
		sig := m.Type().(*types.Signature)
		recv := name + w.typeParamNames(sig.RecvTypeParams())
		if _, ok := sig.Recv().Type().(*types.Pointer); ok {
			recv = "*" + recv
		}
		lines = append(lines, "method ("+recv+") "+m.Name()+w.signature(sig))
	}
	return lines
}

// typeParams returns "[A any, B comparable]", or "" for none.
func (w writer) typeParams(l *types.TypeParamList) string {
	if l.Len() == 0 {
		return ""
	}
	parts := make([]string, l.Len())
	for i := range l.Len() {
		tp := l.At(i)
		parts[i] = tp.Obj().Name() + " " + w.constraint(tp.Constraint())
	}
	return "[" + strings.Join(parts, ", ") + "]"
}

// typeParamNames returns "[A, B]", or "" for none.
func (w writer) typeParamNames(l *types.TypeParamList) string {
	if l.Len() == 0 {
		return ""
	}
	parts := make([]string, l.Len())
	for i := range l.Len() {
		parts[i] = l.At(i).Obj().Name()
	}
	return "[" + strings.Join(parts, ", ") + "]"
}

// constraint writes a type parameter's constraint: an implicit interface
// (~int | ~float32) as its union.
func (w writer) constraint(t types.Type) string {
	if i, ok := t.(*types.Interface); ok && i.IsImplicit() && i.NumEmbeddeds() == 1 {
		return w.typ(i.EmbeddedType(0))
	}
	return w.typ(t)
}

// signature returns "(params) results" without parameter names.
func (w writer) signature(sig *types.Signature) string {
	params := sig.Params()
	ps := make([]string, params.Len())
	for i := range params.Len() {
		t := params.At(i).Type()
		if sig.Variadic() && i == params.Len()-1 {
			ps[i] = "..." + w.typ(t.(*types.Slice).Elem())
			continue
		}
		ps[i] = w.typ(t)
	}
	s := "(" + strings.Join(ps, ", ") + ")"
	res := sig.Results()
	switch res.Len() {
	case 0:
		return s
	case 1:
		return s + " " + w.typ(res.At(0).Type())
	}
	rs := make([]string, res.Len())
	for i := range res.Len() {
		rs[i] = w.typ(res.At(i).Type())
	}
	return s + " (" + strings.Join(rs, ", ") + ")"
}

// qualified returns a declared type's name as the API file writes it.
func (w writer) qualified(obj *types.TypeName, args *types.TypeList) string {
	s := obj.Name()
	if name, ok := w.reexport[obj]; ok {
		s = name
	} else if p := obj.Pkg(); p != nil && p != w.pkg {
		s = p.Name() + "." + s
	}
	if args.Len() > 0 {
		parts := make([]string, args.Len())
		for i := range args.Len() {
			parts[i] = w.typ(args.At(i))
		}
		s += "[" + strings.Join(parts, ", ") + "]"
	}
	return s
}

// typ writes a type.
func (w writer) typ(t types.Type) string {
	switch t := t.(type) {
	case *types.Basic:
		return t.Name()
	case *types.Named:
		return w.qualified(t.Obj(), t.TypeArgs())
	case *types.Alias:
		return w.qualified(t.Obj(), t.TypeArgs())
	case *types.TypeParam:
		return t.Obj().Name()
	case *types.Pointer:
		return "*" + w.typ(t.Elem())
	case *types.Slice:
		return "[]" + w.typ(t.Elem())
	case *types.Array:
		return fmt.Sprintf("[%d]%s", t.Len(), w.typ(t.Elem()))
	case *types.Map:
		return "map[" + w.typ(t.Key()) + "]" + w.typ(t.Elem())
	case *types.Chan:
		switch t.Dir() {
		case types.SendOnly:
			return "chan<- " + w.typ(t.Elem())
		case types.RecvOnly:
			return "<-chan " + w.typ(t.Elem())
		}
		if c, ok := t.Elem().(*types.Chan); ok && c.Dir() == types.RecvOnly {
			return "chan (" + w.typ(c) + ")"
		}
		return "chan " + w.typ(t.Elem())
	case *types.Signature:
		return "func" + w.signature(t)
	case *types.Struct:
		fields := make([]string, t.NumFields())
		for i := range t.NumFields() {
			f := t.Field(i)
			if f.Embedded() {
				fields[i] = w.typ(f.Type())
			} else {
				fields[i] = f.Name() + " " + w.typ(f.Type())
			}
		}
		if len(fields) == 0 {
			return "struct{}"
		}
		return "struct{ " + strings.Join(fields, "; ") + " }"
	case *types.Interface:
		var parts []string
		for i := range t.NumEmbeddeds() {
			parts = append(parts, w.typ(t.EmbeddedType(i)))
		}
		for i := range t.NumExplicitMethods() {
			m := t.ExplicitMethod(i)
			parts = append(parts, m.Name()+w.signature(m.Type().(*types.Signature)))
		}
		if len(parts) == 0 {
			return "interface{}"
		}
		return "interface{ " + strings.Join(parts, "; ") + " }"
	case *types.Union:
		terms := make([]string, t.Len())
		for i := range t.Len() {
			term := t.Term(i)
			terms[i] = w.typ(term.Type())
			if term.Tilde() {
				terms[i] = "~" + terms[i]
			}
		}
		return strings.Join(terms, " | ")
	}
	return t.String()
}
