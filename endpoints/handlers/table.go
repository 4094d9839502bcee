package handlers

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"reflect"
	"time"

	"github.com/miniapi/miniapi/api"
	"github.com/miniapi/miniapi/registry"
	"github.com/miniapi/miniapi/storage"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/duration"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/client-go/util/jsonpath"
)

// includeObject values: what each Table row carries beside its cells.
const (
	includeNone     = "None"
	includeMetadata = "Metadata"
	includeObject   = "Object"
)

// metaDocs are the field descriptions kube-apiserver gives the Name and
// Age columns.
var metaDocs = metav1.ObjectMeta{}.SwaggerDoc()

// tablePrinter turns stored objects of one type into Table rows, the way
// kube-apiserver prints custom resources: a Name column, then the type's
// printer columns read by JSONPath (Age alone when it declares none).
//
// A tablePrinter is used by one request goroutine: jsonpath evaluation
// keeps state in the parsed paths.
type tablePrinter struct {
	apiVersion string // of the Table: meta.k8s.io/v1 or v1beta1
	include    string
	columns    []api.TableColumnDefinition
	// paths[i] reads columns[i+1]; nil when the JSONPath does not parse,
	// which leaves the column empty rather than failing every request.
	paths []*jsonpath.JSONPath
	// computer fills the columns declared without a JSONPath.
	computer registry.ColumnComputer
	// kind, when set, prints the cells itself (a built-in kind, with
	// kube's printer); columns and paths are then unused but for Name.
	kind registry.TablePrinter
	ctx  context.Context
	buf  bytes.Buffer
}

// newTablePrinter prepares the Table conversion for a request, reading
// includeObject from its query; an unknown value is 400, as in
// kube-apiserver.
func newTablePrinter(ctx context.Context, t *registry.Type, out output, query url.Values) (*tablePrinter, error) {
	include := query.Get("includeObject")
	switch include {
	case "":
		include = includeMetadata
	case includeNone, includeMetadata, includeObject:
	default:
		err := field.Invalid(field.NewPath("includeObject"), include, "must be 'Metadata', 'Object', 'None', or empty")
		return nil, api.NewBadRequest(fmt.Sprintf("Unable to convert to Table as requested: %v", err))
	}
	if kp, ok := t.Strategy.(registry.TablePrinter); ok {
		return &tablePrinter{apiVersion: out.asAPIVersion(), include: include, columns: kp.TableColumns(), kind: kp, ctx: ctx}, nil
	}
	cols := t.PrinterColumns
	if len(cols) == 0 {
		// kube-apiserver's default for a CRD without printer columns.
		cols = registry.DefaultPrinterColumns()
	}
	computer, _ := t.Strategy.(registry.ColumnComputer)
	p := &tablePrinter{
		computer:   computer,
		apiVersion: out.asAPIVersion(),
		include:    include,
		columns:    make([]api.TableColumnDefinition, 0, 1+len(cols)),
		paths:      make([]*jsonpath.JSONPath, 0, len(cols)),
	}
	p.columns = append(p.columns, api.TableColumnDefinition{Name: "Name", Type: "string", Format: "name", Description: metaDocs["name"]})
	for _, c := range cols {
		desc := c.Description
		if desc == "" {
			desc = "Custom resource definition column (in JSONPath format): " + c.JSONPath
		}
		p.columns = append(p.columns, api.TableColumnDefinition{
			Name: c.Name, Type: c.Type, Format: c.Format, Description: desc, Priority: c.Priority,
		})
		if c.JSONPath == "" {
			p.paths = append(p.paths, nil) // computed by the strategy
			continue
		}
		jp := jsonpath.New(c.Name)
		if err := jp.Parse("{" + c.JSONPath + "}"); err != nil {
			jp = nil
		} else {
			jp.AllowMissingKeys(true)
		}
		p.paths = append(p.paths, jp)
	}
	return p, nil
}

// encodeList encodes a Table of items with the list's metadata.
func (p *tablePrinter) encodeList(meta api.ListMeta, items []*storage.Object) ([]byte, error) {
	tbl := p.newTable(true)
	tbl.Metadata = meta
	if p.kind != nil {
		rows, err := p.kindRows(items)
		if err != nil {
			return nil, err
		}
		tbl.Rows = rows
		return json.Marshal(tbl)
	}
	tbl.Rows = make([]api.TableRow, 0, len(items))
	for _, it := range items {
		row, _, err := p.row(it.Data)
		if err != nil {
			return nil, err
		}
		tbl.Rows = append(tbl.Rows, row)
	}
	return json.Marshal(tbl)
}

// encodeObject encodes a one-row Table of one object, carrying its
// resourceVersion. Column definitions are left out when headers is false
// (every Table watch frame after the first).
func (p *tablePrinter) encodeObject(data []byte, headers bool) ([]byte, error) {
	tbl := p.newTable(headers)
	if p.kind != nil {
		rows, err := p.kindRows([]*storage.Object{{Data: data}})
		if err != nil {
			return nil, err
		}
		tbl.Metadata.ResourceVersion = resourceVersionOf(data)
		tbl.Rows = rows
		return json.Marshal(tbl)
	}
	row, rv, err := p.row(data)
	if err != nil {
		return nil, err
	}
	tbl.Metadata.ResourceVersion = rv
	tbl.Rows = []api.TableRow{row}
	return json.Marshal(tbl)
}

// kindRows prints items with the kind's printer and gives each row the
// object includeObject asks for.
func (p *tablePrinter) kindRows(items []*storage.Object) ([]api.TableRow, error) {
	data := make([][]byte, len(items))
	for i, it := range items {
		data[i] = it.Data
	}
	rows, err := p.kind.TableRows(p.ctx, data)
	if err != nil {
		return nil, err
	}
	if len(rows) != len(items) {
		return nil, fmt.Errorf("handlers: the printer gave %d rows for %d objects", len(rows), len(items))
	}
	for i := range rows {
		if rows[i].Object, err = p.rowObject(items[i].Data); err != nil {
			return nil, err
		}
	}
	return rows, nil
}

// rowObject is what a row carries beside its cells, as includeObject
// asks: nothing, the object's PartialObjectMetadata, or the object.
func (p *tablePrinter) rowObject(data []byte) (json.RawMessage, error) {
	switch p.include {
	case includeObject:
		return data, nil
	case includeMetadata:
		return encodePartialObject(p.apiVersion, data)
	}
	return nil, nil
}

func (p *tablePrinter) newTable(headers bool) *api.Table {
	tbl := &api.Table{TypeMeta: api.TypeMeta{APIVersion: p.apiVersion, Kind: asTable}}
	if headers {
		tbl.ColumnDefinitions = p.columns
	}
	return tbl
}

// row computes one object's cells and its row object, and returns the
// object's resourceVersion.
func (p *tablePrinter) row(data []byte) (api.TableRow, string, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var obj map[string]any
	if err := dec.Decode(&obj); err != nil {
		return api.TableRow{}, "", fmt.Errorf("handlers: decode object for table: %w", err)
	}
	normalizeNumbers(obj)
	meta, _ := obj["metadata"].(map[string]any)
	name, _ := meta["name"].(string)
	rv, _ := meta["resourceVersion"].(string)

	row := api.TableRow{Cells: make([]any, 1, len(p.columns))}
	row.Cells[0] = name
	for i, jp := range p.paths {
		col := p.columns[i+1]
		if jp == nil && p.computer != nil {
			v, _ := p.computer.ComputeColumn(col.Name, obj)
			row.Cells = append(row.Cells, v)
			continue
		}
		row.Cells = append(row.Cells, p.cell(jp, col.Type, obj))
	}
	ro, err := p.rowObject(data)
	if err != nil {
		return api.TableRow{}, "", err
	}
	row.Object = ro
	return row, rv, nil
}

// cell reads one column's value, typed by the column's type as
// kube-apiserver types CRD columns: strings are printed as kubectl's
// JSONPath printer prints them, numbers and booleans kept when they match
// the type, dates shown as an age ("5m"), anything else null.
func (p *tablePrinter) cell(jp *jsonpath.JSONPath, typ string, obj map[string]any) any {
	if jp == nil {
		return nil
	}
	results, err := jp.FindResults(obj)
	if err != nil || len(results) == 0 || len(results[0]) == 0 {
		return nil
	}
	// Column paths are simple, so the first result is the value.
	v := results[0][0].Interface()
	if v == nil {
		return nil
	}
	switch typ {
	case "string":
		p.buf.Reset()
		if err := jp.PrintResults(&p.buf, []reflect.Value{reflect.ValueOf(v)}); err != nil {
			return nil
		}
		return p.buf.String()
	case "integer":
		switch n := v.(type) {
		case int64:
			return n
		case float64:
			return int64(n)
		}
	case "number":
		switch n := v.(type) {
		case int64:
			return float64(n)
		case float64:
			return n
		}
	case "boolean":
		if b, ok := v.(bool); ok {
			return b
		}
	case "date":
		if s, ok := v.(string); ok {
			return age(s)
		}
	}
	return nil
}

// age prints the time since an RFC 3339 timestamp as kubectl prints ages.
func age(ts string) string {
	if ts == "" {
		return "<unknown>"
	}
	t, err := time.Parse(time.RFC3339, ts)
	if err != nil {
		return "<invalid>"
	}
	return duration.HumanDuration(time.Since(t))
}

// normalizeNumbers turns the json.Numbers of a decoded document into
// int64 where they are integers and float64 otherwise, as Kubernetes'
// unstructured objects hold them, so JSONPath filters and cells see the
// same values they would in kube-apiserver.
func normalizeNumbers(v any) any {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			x[k] = normalizeNumbers(e)
		}
	case []any:
		for i, e := range x {
			x[i] = normalizeNumbers(e)
		}
	case json.Number:
		if n, err := x.Int64(); err == nil {
			return n
		}
		if f, err := x.Float64(); err == nil {
			return f
		}
		return x.String()
	}
	return v
}

// resourceVersionOf reads metadata.resourceVersion from an encoded object.
func resourceVersionOf(data []byte) string {
	var m struct {
		ResourceVersion string `json:"resourceVersion"`
	}
	if span := storage.MetadataJSON(data); span != nil && json.Unmarshal(span, &m) == nil {
		return m.ResourceVersion
	}
	return ""
}
