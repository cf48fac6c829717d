package fbc

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"strings"

	jsoniter "github.com/json-iterator/go"
	k8syaml "k8s.io/apimachinery/pkg/util/yaml"

	"github.com/almproject/alm/catalog/bundle"
)

// fastJSON decodes File-Based Catalog JSON as encoding/json does (field names matched case-insensitively, unknown
// fields ignored), faster: encoding/json scans a document once to find its end, again to decode it, and twice more
// for each property value, which made decoding most of a catalog image's load.
var fastJSON = jsoniter.ConfigCompatibleWithStandardLibrary

// newDocDecoder returns a function that decodes the next document of r, io.EOF after the last one: a JSON stream
// (the first character that is not white space is '{', as opm writes catalogs) is read in one pass (readDoc),
// anything else as YAML (or JSON) documents by the Kubernetes decoder (yaml is true).
func newDocDecoder(r io.Reader, forRender bool) (decode func(d *fbcDoc) error, yaml bool) {
	br := bufio.NewReaderSize(r, 64<<10)
	if !startsWithBrace(br) {
		dec := k8syaml.NewYAMLOrJSONDecoder(br, 4096)
		return func(d *fbcDoc) error { return dec.Decode(d) }, true
	}
	iter := jsoniter.Parse(fastJSON, br, 64<<10)
	return func(d *fbcDoc) error {
		switch iter.WhatIsNext() {
		case jsoniter.InvalidValue:
			if errors.Is(iter.Error, io.EOF) {
				return io.EOF
			}
		case jsoniter.ObjectValue:
		case jsoniter.NilValue: // as encoding/json decodes null: a document with no fields
			iter.Skip()
			return iter.Error
		default:
			got := iter.WhatIsNext()
			iter.Skip()
			return fmt.Errorf("a document is a JSON object, not %s", typeName(got))
		}
		readDoc(iter, d, forRender)
		if iter.Error == nil {
			return nil
		}
		if errors.Is(iter.Error, io.EOF) { // in the middle of a document
			return io.ErrUnexpectedEOF
		}
		return iter.Error
	}, false
}

// startsWithBrace reports whether the first character of br that is not white space is '{'.
func startsWithBrace(br *bufio.Reader) bool {
	for n := 1; ; n++ {
		b, err := br.Peek(n)
		if len(b) < n || err != nil {
			return false
		}
		switch b[n-1] {
		case ' ', '\t', '\r', '\n':
			continue
		}
		return b[n-1] == '{'
	}
}

// readDoc decodes one document into d as encoding/json decodes it into fbcDoc (field names in any case, the last of
// a repeated field wins, null leaves a field as it is), in one pass: an olm.csv.metadata value that follows its type
// (as opm writes it) is decoded as it is read (readCSVMetadata), unless it is kept whole for rendering.
func readDoc(iter *jsoniter.Iterator, d *fbcDoc, forRender bool) {
	iter.ReadObjectCB(func(iter *jsoniter.Iterator, field string) bool {
		switch {
		case strings.EqualFold(field, "schema"):
			readString(iter, &d.Schema)
		case strings.EqualFold(field, "name"):
			readString(iter, &d.Name)
		case strings.EqualFold(field, "package"):
			readString(iter, &d.Package)
		case strings.EqualFold(field, "defaultChannel"):
			readString(iter, &d.DefaultChannel)
		case strings.EqualFold(field, "image"):
			readString(iter, &d.Image)
		case strings.EqualFold(field, "kind"):
			readString(iter, &d.Kind)
		case strings.EqualFold(field, "entries"):
			d.Entries = iter.SkipAndReturnBytes()
		case strings.EqualFold(field, "properties"):
			if iter.WhatIsNext() == jsoniter.NilValue {
				iter.Skip()
				break
			}
			d.Properties = d.Properties[:0]
			iter.ReadArrayCB(func(iter *jsoniter.Iterator) bool {
				d.Properties = append(d.Properties, readProperty(iter, forRender))
				return iter.Error == nil
			})
		default:
			iter.Skip()
		}
		return iter.Error == nil
	})
}

// readProperty decodes one property of an olm.bundle document.
func readProperty(iter *jsoniter.Iterator, forRender bool) fbcProperty {
	var p fbcProperty
	iter.ReadObjectCB(func(iter *jsoniter.Iterator, field string) bool {
		switch {
		case strings.EqualFold(field, "type"):
			readString(iter, &p.Type)
		case strings.EqualFold(field, "value"):
			p.Value, p.csv, p.csvErr = nil, nil, nil
			if p.Type == propCSVMetadata && !forRender {
				p.csv, p.csvErr = readCSVMetadata(iter)
			} else {
				p.Value = iter.SkipAndReturnBytes()
			}
		default:
			iter.Skip()
		}
		return iter.Error == nil
	})
	return p
}

// readString reads a string into dst; null leaves dst as it is; another value is an error of the document.
func readString(iter *jsoniter.Iterator, dst *string) {
	if iter.WhatIsNext() == jsoniter.NilValue {
		iter.Skip()
		return
	}
	*dst = iter.ReadString()
}

// csvReader reads the parts of an olm.csv.metadata value csvMetadataDoc keeps and skips the rest; a value of the
// wrong type is the property's error (the first is kept), not the document's.
type csvReader struct {
	iter *jsoniter.Iterator
	err  error
}

// readCSVMetadata decodes an olm.csv.metadata value as fastJSON.Unmarshal decodes it into csvMetadataDoc, in the
// same pass as its document; only the annotations csvMetadata reads are kept.
func readCSVMetadata(iter *jsoniter.Iterator) (*csvMetadataDoc, error) {
	r, md := &csvReader{iter: iter}, &csvMetadataDoc{}
	r.object("value", func(field string) {
		switch {
		case strings.EqualFold(field, "displayName"):
			r.str("displayName", &md.DisplayName)
		case strings.EqualFold(field, "annotations"):
			r.object("annotations", func(key string) {
				var v string
				r.str("annotations."+key, &v)
				if key == bundle.AnnotationSkipRange || key == bundle.AnnotationHandoff {
					if md.Annotations == nil {
						md.Annotations = map[string]string{}
					}
					md.Annotations[key] = v
				}
			})
		case strings.EqualFold(field, "crdDescriptions"):
			r.object("crdDescriptions", func(field string) {
				switch {
				case strings.EqualFold(field, "owned"):
					r.crds("crdDescriptions.owned", &md.CustomResourceDefinitions.Owned)
				case strings.EqualFold(field, "required"):
					r.crds("crdDescriptions.required", &md.CustomResourceDefinitions.Required)
				default:
					iter.Skip()
				}
			})
		default:
			iter.Skip()
		}
	})
	return md, r.err
}

// crds reads a list of CRD descriptions.
func (r *csvReader) crds(what string, dst *[]crdDescriptionDoc) {
	if r.iter.WhatIsNext() == jsoniter.NilValue {
		r.iter.Skip()
		return
	}
	if r.iter.WhatIsNext() != jsoniter.ArrayValue {
		r.wrongType(what, "an array")
		return
	}
	*dst = (*dst)[:0]
	r.iter.ReadArrayCB(func(iter *jsoniter.Iterator) bool {
		var d crdDescriptionDoc
		r.object(what+"[]", func(field string) {
			switch {
			case strings.EqualFold(field, "name"):
				r.str(what+"[].name", &d.Name)
			case strings.EqualFold(field, "version"):
				r.str(what+"[].version", &d.Version)
			case strings.EqualFold(field, "kind"):
				r.str(what+"[].kind", &d.Kind)
			case strings.EqualFold(field, "displayName"):
				r.str(what+"[].displayName", &d.DisplayName)
			default:
				iter.Skip()
			}
		})
		*dst = append(*dst, d)
		return iter.Error == nil
	})
}

// object reads an object (null: nothing), calling field for each of its fields, which must read the field's value.
func (r *csvReader) object(what string, field func(name string)) {
	switch r.iter.WhatIsNext() {
	case jsoniter.NilValue:
		r.iter.Skip()
	case jsoniter.ObjectValue:
		r.iter.ReadObjectCB(func(iter *jsoniter.Iterator, name string) bool {
			field(name)
			return iter.Error == nil
		})
	default:
		r.wrongType(what, "an object")
	}
}

// str reads a string into dst (null: nothing).
func (r *csvReader) str(what string, dst *string) {
	switch r.iter.WhatIsNext() {
	case jsoniter.NilValue:
		r.iter.Skip()
	case jsoniter.StringValue:
		*dst = r.iter.ReadString()
	default:
		r.wrongType(what, "a string")
	}
}

// wrongType skips a value of the wrong type and keeps the first such error.
func (r *csvReader) wrongType(what, want string) {
	got := r.iter.WhatIsNext()
	r.iter.Skip()
	if r.err == nil {
		r.err = fmt.Errorf("%s is %s, not %s", what, typeName(got), want)
	}
}

func typeName(t jsoniter.ValueType) string {
	switch t {
	case jsoniter.StringValue:
		return "a string"
	case jsoniter.NumberValue:
		return "a number"
	case jsoniter.BoolValue:
		return "a boolean"
	case jsoniter.ArrayValue:
		return "an array"
	case jsoniter.ObjectValue:
		return "an object"
	}
	return "not a value"
}
