package builtin

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"

	"github.com/miniapi/miniapi/api"
	"github.com/miniapi/miniapi/registry"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/registry/rest"
	"k8s.io/kubernetes/pkg/apis/autoscaling"
	"k8s.io/kubernetes/pkg/printers"
	printersinternal "k8s.io/kubernetes/pkg/printers/internalversion"
)

// tableGenerator is kube-apiserver's table printer of the built-in kinds,
// built on first use: registering its handlers takes a few milliseconds
// that a server nobody runs `kubectl get` against need not spend.
var tableGenerator = sync.OnceValue(func() *printers.HumanReadableGenerator {
	return printers.NewTableGenerator().With(printersinternal.AddHandlers)
})

// TableColumns returns the columns kube's printer prints for the kind,
// all of them, as kube-apiserver serves them (kubectl shows those of
// priority 0 unless asked for wide output).
func (k *kind) TableColumns() []api.TableColumnDefinition {
	t, err := k.table(context.Background(), k.newInternal(), false)
	if err != nil {
		return nil
	}
	return columnsOf(t)
}

// TableRows prints each encoded object with kube's printer for the kind.
func (k *kind) TableRows(ctx context.Context, items [][]byte) ([]api.TableRow, error) {
	rows := make([]api.TableRow, 0, len(items))
	for _, data := range items {
		v, err := k.decodeVersioned(data)
		if err != nil {
			return nil, err
		}
		in, err := k.internalOf(v)
		if err != nil {
			return nil, err
		}
		t, err := k.table(ctx, in, true)
		if err != nil {
			return nil, fmt.Errorf("builtin: print %s: %w", k.gvk, err)
		}
		rows = appendRows(rows, t)
	}
	return rows, nil
}

// table prints obj as kube-apiserver's storage for the kind does: with
// kube's printer, with the storage's own convertor, or, for the few kinds
// kube has none for (roles, limitranges...), with the default
// convertor's Name and Created At.
func (k *kind) table(ctx context.Context, obj runtime.Object, noHeaders bool) (*metav1.Table, error) {
	if k.r.printer != nil {
		return k.r.printer.ConvertToTable(ctx, obj, &metav1.TableOptions{NoHeaders: noHeaders})
	}
	if k.r.defaultTable {
		return rest.NewDefaultTableConvertor(k.gr).ConvertToTable(ctx, obj, &metav1.TableOptions{NoHeaders: noHeaders})
	}
	return tableGenerator().GenerateTable(obj, printers.GenerateOptions{Wide: true, NoHeaders: noHeaders})
}

// columnsOf is a kube Table's column definitions in miniapi's types.
func columnsOf(t *metav1.Table) []api.TableColumnDefinition {
	out := make([]api.TableColumnDefinition, 0, len(t.ColumnDefinitions))
	for _, c := range t.ColumnDefinitions {
		out = append(out, api.TableColumnDefinition{Name: c.Name, Type: c.Type, Format: c.Format, Description: c.Description, Priority: c.Priority})
	}
	return out
}

// appendRows appends a kube Table's rows, in miniapi's types, to rows.
func appendRows(rows []api.TableRow, t *metav1.Table) []api.TableRow {
	for _, r := range t.Rows {
		rows = append(rows, api.TableRow{Cells: r.Cells, Conditions: rowConditions(r.Conditions)})
	}
	return rows
}

func rowConditions(cs []metav1.TableRowCondition) []api.TableRowCondition {
	if len(cs) == 0 {
		return nil
	}
	out := make([]api.TableRowCondition, 0, len(cs))
	for _, c := range cs {
		out = append(out, api.TableRowCondition{Type: string(c.Type), Status: string(c.Status), Reason: c.Reason, Message: c.Message})
	}
	return out
}

// ScalePrinter prints a built-in kind's autoscaling/v1 Scale as
// kube-apiserver's scale subresources do (`kubectl get deployment d
// --subresource=scale`): with kube's printer for Scale, whose columns
// are Name, Desired, Available and Age.
func ScalePrinter() registry.TablePrinter { return scalePrinter{} }

type scalePrinter struct{}

// TableColumns returns kube's printer's columns for a Scale.
func (scalePrinter) TableColumns() []api.TableColumnDefinition {
	t, err := tableGenerator().GenerateTable(&autoscaling.Scale{}, printers.GenerateOptions{Wide: true})
	if err != nil {
		return nil
	}
	return columnsOf(t)
}

// TableRows prints each autoscaling/v1 Scale, given as JSON.
func (scalePrinter) TableRows(_ context.Context, items [][]byte) ([]api.TableRow, error) {
	rows := make([]api.TableRow, 0, len(items))
	for _, data := range items {
		var v autoscalingv1.Scale
		if err := json.Unmarshal(data, &v); err != nil {
			return nil, fmt.Errorf("builtin: print Scale: %w", err)
		}
		var in autoscaling.Scale
		if err := scheme.Convert(&v, &in, nil); err != nil {
			return nil, fmt.Errorf("builtin: print Scale: %w", err)
		}
		t, err := tableGenerator().GenerateTable(&in, printers.GenerateOptions{Wide: true, NoHeaders: true})
		if err != nil {
			return nil, fmt.Errorf("builtin: print Scale: %w", err)
		}
		rows = appendRows(rows, t)
	}
	return rows, nil
}
