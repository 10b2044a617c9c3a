package main

import (
	"bufio"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/google/uuid"
	pb "go.gazette.dev/core/broker/protocol"
	"go.gazette.dev/core/labels"
	"go.gazette.dev/core/message"
)

// doc is a message of any of Gazette's three framings, kept as the bytes the framing reads and
// writes, with its UUID where the connector expects it by default: at JSON pointer
// /_meta/uuid, in the first CSV column, or in protobuf bytes field 1.
type doc struct {
	contentType string
	uuid        message.UUID
	body        string   // JSON members after _meta, e.g. `"seq":3`
	raw         []byte   // JSON line or protobuf payload as read
	fields      []string // CSV fields after the UUID
}

func newDoc(contentType string, seq int, producer string, pad int) *doc {
	var d = &doc{contentType: contentType}
	var padding = strings.Repeat("x", pad)
	switch contentType {
	case labels.ContentType_CSV:
		d.fields = []string{fmt.Sprint(seq), producer, padding}
	case labels.ContentType_ProtoFixed:
		d.raw = appendBytesField(appendBytesField(nil, 2, []byte(fmt.Sprintf("%s-%d", producer, seq))), 3, []byte(padding))
	default:
		d.body = fmt.Sprintf(`"seq":%d,"producer":%q,"pad":%q`, seq, producer, padding)
	}
	return d
}

func (d *doc) GetUUID() message.UUID  { return d.uuid }
func (d *doc) SetUUID(u message.UUID) { d.uuid = u }
func (d *doc) NewAcknowledgement(pb.Journal) message.Message {
	var ack = &doc{contentType: d.contentType}
	if d.fields != nil {
		ack.fields = make([]string, len(d.fields)) // same width, as Gazette's CSVRecord does
	}
	return ack
}

// clone snapshots a published message, UUID included, for re-sending it later.
func (d *doc) clone() *doc { var c = *d; return &c }

// MarshalJSONTo writes the document with its UUID at /_meta/uuid, or without _meta when the
// UUID is zero (a message outside exactly-once processing).
func (d *doc) MarshalJSONTo(bw *bufio.Writer) (int, error) {
	var members []string
	if d.uuid != (message.UUID{}) {
		members = append(members, fmt.Sprintf(`"_meta":{"uuid":%q}`, d.uuid.String()))
	}
	if d.body != "" {
		members = append(members, d.body)
	}
	return bw.WriteString("{" + strings.Join(members, ",") + "}\n")
}

func (d *doc) UnmarshalJSON(b []byte) error {
	d.raw = append([]byte(nil), b...)
	var v struct {
		Meta struct {
			UUID string `json:"uuid"`
		} `json:"_meta"`
	}
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	return d.parseUUID(v.Meta.UUID)
}

func (d *doc) MarshalCSV() ([]string, error) {
	var first = ""
	if d.uuid != (message.UUID{}) {
		first = d.uuid.String()
	}
	return append([]string{first}, d.fields...), nil
}

func (d *doc) UnmarshalCSV(fields []string) error {
	d.fields = append([]string(nil), fields[1:]...)
	return d.parseUUID(fields[0])
}

func (d *doc) ProtoSize() int { return len(d.protoBytes()) }

func (d *doc) MarshalTo(b []byte) (int, error) { return copy(b, d.protoBytes()), nil }

func (d *doc) Unmarshal(b []byte) error {
	d.raw = append([]byte(nil), b...)
	var u, err = lastBytesField(b, 1)
	if err != nil {
		return err
	}
	switch len(u) {
	case 0:
		d.uuid = message.UUID{}
	case 16:
		copy(d.uuid[:], u)
	default:
		return fmt.Errorf("uuid field has %d bytes", len(u))
	}
	return nil
}

func (d *doc) protoBytes() []byte {
	var b = append([]byte(nil), d.raw...)
	if d.uuid != (message.UUID{}) {
		b = appendBytesField(b, 1, d.uuid[:])
	}
	return b
}

func (d *doc) parseUUID(s string) error {
	if s == "" {
		d.uuid = message.UUID{}
		return nil
	}
	var u, err = uuid.Parse(s)
	d.uuid = u
	return err
}

// payload is how the judge prints a message: the JSON document, the CSV fields after the UUID
// joined by commas, or the protobuf payload in hex.
func (d *doc) payload() string {
	switch d.contentType {
	case labels.ContentType_CSV:
		return strings.Join(d.fields, ",")
	case labels.ContentType_ProtoFixed:
		return fmt.Sprintf("%x", d.raw)
	default:
		return strings.TrimRight(string(d.raw), "\r\n")
	}
}

func appendBytesField(b []byte, field int, v []byte) []byte {
	b = binary.AppendUvarint(b, uint64(field)<<3|2)
	b = binary.AppendUvarint(b, uint64(len(v)))
	return append(b, v...)
}

func lastBytesField(b []byte, field uint64) ([]byte, error) {
	var found []byte
	for len(b) != 0 {
		var key, n = binary.Uvarint(b)
		if n <= 0 {
			return nil, fmt.Errorf("bad field key")
		}
		b = b[n:]
		switch key & 7 {
		case 0:
			if _, n = binary.Uvarint(b); n <= 0 {
				return nil, fmt.Errorf("bad varint")
			}
			b = b[n:]
		case 1:
			b = b[8:]
		case 5:
			b = b[4:]
		case 2:
			var l, n = binary.Uvarint(b)
			if n <= 0 || uint64(len(b)-n) < l {
				return nil, fmt.Errorf("bad length")
			}
			if key>>3 == field {
				found = b[n : n+int(l)]
			}
			b = b[n+int(l):]
		default:
			return nil, fmt.Errorf("unsupported wire type %d", key&7)
		}
	}
	return found, nil
}

// newDocFunc gives the iterators a doc of the journal's framing.
func newDocFunc(spec *pb.JournalSpec) (message.Message, error) {
	return &doc{contentType: spec.LabelSet.ValueOf(labels.ContentType)}, nil
}
