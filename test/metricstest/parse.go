package metricstest

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/prometheus/common/model"
)

// The parser of the PromQL subset Eval evaluates.

type token struct {
	kind string // "ident", "number", "string", "duration", "op"
	text string
}

type parser struct {
	toks []token
	pos  int
}

// operators, longest first so that "==" is not read as "=" "=".
var operators = []string{"==", "!=", ">=", "<=", "=~", "!~", "=", ">", "<", "/", "*", "(", ")", "{", "}", "[", "]", ","}

func (p *parser) lex(s string) error {
	for i := 0; i < len(s); {
		c := rune(s[i])
		switch {
		case unicode.IsSpace(c):
			i++
		case c == '"':
			j := i + 1
			for j < len(s) && s[j] != '"' {
				if s[j] == '\\' {
					j++
				}
				j++
			}
			if j >= len(s) {
				return fmt.Errorf("unterminated string at %d", i)
			}
			v, err := strconv.Unquote(s[i : j+1])
			if err != nil {
				return err
			}
			p.toks = append(p.toks, token{"string", v})
			i = j + 1
		case unicode.IsDigit(c) || c == '.':
			j := i
			for j < len(s) && (unicode.IsDigit(rune(s[j])) || s[j] == '.' || unicode.IsLetter(rune(s[j]))) {
				j++
			}
			kind := "number"
			if strings.IndexFunc(s[i:j], unicode.IsLetter) >= 0 {
				kind = "duration"
			}
			p.toks = append(p.toks, token{kind, s[i:j]})
			i = j
		case unicode.IsLetter(c) || c == '_' || c == ':':
			j := i
			for j < len(s) && (unicode.IsLetter(rune(s[j])) || unicode.IsDigit(rune(s[j])) || s[j] == '_' || s[j] == ':') {
				j++
			}
			p.toks = append(p.toks, token{"ident", s[i:j]})
			i = j
		default:
			op := ""
			for _, o := range operators {
				if strings.HasPrefix(s[i:], o) {
					op = o
					break
				}
			}
			if op == "" {
				return fmt.Errorf("unsupported character %q at %d", c, i)
			}
			p.toks = append(p.toks, token{"op", op})
			i += len(op)
		}
	}
	return nil
}

func (p *parser) peek() token {
	if p.pos < len(p.toks) {
		return p.toks[p.pos]
	}
	return token{}
}

func (p *parser) next() token {
	t := p.peek()
	p.pos++
	return t
}

func (p *parser) expect(text string) error {
	if t := p.next(); t.text != text {
		return fmt.Errorf("expected %q, found %q", text, t.text)
	}
	return nil
}

// parseExpr: comparison (lowest precedence) over multiplication over unary.
func (p *parser) parseExpr() (node, error) {
	left, err := p.parseMul()
	if err != nil {
		return nil, err
	}
	for t := p.peek(); t.kind == "op" && isComparison(t.text); t = p.peek() {
		p.next()
		right, err := p.parseMul()
		if err != nil {
			return nil, err
		}
		left = &binaryNode{op: t.text, left: left, right: right}
	}
	return left, nil
}

func (p *parser) parseMul() (node, error) {
	left, err := p.parseUnary()
	if err != nil {
		return nil, err
	}
	for t := p.peek(); t.kind == "op" && (t.text == "/" || t.text == "*"); t = p.peek() {
		p.next()
		right, err := p.parseUnary()
		if err != nil {
			return nil, err
		}
		left = &binaryNode{op: t.text, left: left, right: right}
	}
	return left, nil
}

func (p *parser) parseUnary() (node, error) {
	t := p.next()
	switch {
	case t.kind == "number":
		f, err := strconv.ParseFloat(t.text, 64)
		return numberNode(f), err
	case t.text == "(":
		n, err := p.parseExpr()
		if err != nil {
			return nil, err
		}
		return n, p.expect(")")
	case t.kind == "ident" && (t.text == "sum" || t.text == "max" || t.text == "min" || t.text == "count"):
		return p.parseAggregate(t.text)
	case t.kind == "ident" && t.text == "rate":
		return p.parseRate()
	case t.kind == "ident" && p.peek().text == "(":
		return nil, fmt.Errorf("function %s is not supported by this evaluator", t.text)
	case t.kind == "ident" || t.text == "{":
		p.pos--
		return p.parseSelector()
	}
	return nil, fmt.Errorf("unexpected %q", t.text)
}

func (p *parser) parseAggregate(op string) (node, error) {
	var by []string
	var err error
	if p.peek().text == "by" {
		if by, err = p.parseBy(); err != nil {
			return nil, err
		}
	} else if p.peek().text == "without" {
		return nil, fmt.Errorf("%s without (...) is not supported by this evaluator", op)
	}
	if err := p.expect("("); err != nil {
		return nil, err
	}
	arg, err := p.parseExpr()
	if err != nil {
		return nil, err
	}
	if err := p.expect(")"); err != nil {
		return nil, err
	}
	if by == nil && p.peek().text == "by" {
		if by, err = p.parseBy(); err != nil {
			return nil, err
		}
	}
	return &aggregateNode{op: op, by: by, arg: arg}, nil
}

func (p *parser) parseBy() ([]string, error) {
	p.next() // by
	if err := p.expect("("); err != nil {
		return nil, err
	}
	by := []string{}
	for p.peek().text != ")" {
		t := p.next()
		if t.kind != "ident" {
			return nil, fmt.Errorf("expected a label name in by (...), found %q", t.text)
		}
		by = append(by, t.text)
		if p.peek().text == "," {
			p.next()
		}
	}
	return by, p.expect(")")
}

func (p *parser) parseRate() (node, error) {
	if err := p.expect("("); err != nil {
		return nil, err
	}
	n, err := p.parseSelector()
	if err != nil {
		return nil, err
	}
	sel := n.(*selectorNode)
	if err := p.expect("["); err != nil {
		return nil, fmt.Errorf("rate needs a range selector: %w", err)
	}
	d := p.next()
	rng, err := model.ParseDuration(d.text)
	if err != nil {
		return nil, err
	}
	sel.rng = time.Duration(rng)
	if err := p.expect("]"); err != nil {
		return nil, err
	}
	return &rateNode{sel: sel}, p.expect(")")
}

func (p *parser) parseSelector() (node, error) {
	sel := &selectorNode{}
	if t := p.peek(); t.kind == "ident" {
		p.next()
		sel.matchers = append(sel.matchers, matcher{name: model.MetricNameLabel, op: "=", value: t.text})
	}
	if p.peek().text != "{" {
		if len(sel.matchers) == 0 {
			return nil, fmt.Errorf("expected a metric name or {, found %q", p.peek().text)
		}
		return sel, nil
	}
	p.next()
	for p.peek().text != "}" {
		name, op, val := p.next(), p.next(), p.next()
		if name.kind != "ident" || val.kind != "string" {
			return nil, fmt.Errorf("bad label matcher %s%s%s", name.text, op.text, val.text)
		}
		m := matcher{name: name.text, op: op.text, value: val.text}
		switch op.text {
		case "=", "!=":
		case "=~", "!~":
			re, err := regexp.Compile("^(?:" + val.text + ")$")
			if err != nil {
				return nil, err
			}
			m.re = re
		default:
			return nil, fmt.Errorf("bad label matcher operator %q", op.text)
		}
		sel.matchers = append(sel.matchers, m)
		if p.peek().text == "," {
			p.next()
		}
	}
	p.next()
	return sel, nil
}
