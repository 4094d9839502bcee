package builtin

import (
	"context"
	"testing"
)

// TestScalePrinter: a built-in kind's Scale prints as kube-apiserver
// prints it for `kubectl get deployment d --subresource=scale` (read from
// kube-apiserver 1.37.1): Name, Desired, Available, Age.
func TestScalePrinter(t *testing.T) {
	p := ScalePrinter()
	var names []string
	for _, c := range p.TableColumns() {
		names = append(names, c.Name)
	}
	if got := names; len(got) != 4 || got[0] != "Name" || got[1] != "Desired" || got[2] != "Available" || got[3] != "Age" {
		t.Fatalf("columns %v", got)
	}
	rows, err := p.TableRows(context.Background(), [][]byte{[]byte(`{"apiVersion":"autoscaling/v1","kind":"Scale","metadata":{"name":"d","namespace":"ns"},"spec":{"replicas":3},"status":{"replicas":1,"selector":"a=b"}}`)})
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 1 || rows[0].Cells[0] != "d" || rows[0].Cells[1] != int64(3) || rows[0].Cells[2] != int64(1) {
		t.Fatalf("rows %+v", rows)
	}
	if _, err := p.TableRows(context.Background(), [][]byte{[]byte(`{"spec":`)}); err == nil {
		t.Fatal("a Scale that does not decode printed")
	}
}
