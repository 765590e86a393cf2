//! Verilog text helpers shared by the NI generators: zero padding, ring
//! queues in distributed RAM, and packed records (a set of named fields
//! carried as one vector through a queue).

use anyhow::{Context, Result};
use std::fmt::Write as _;

/// Render one of the NI's Verilog templates (`hdl/templates/ni/`), naming
/// it in the error.
pub fn render(t: &impl askama::Template, name: &str) -> Result<String> {
    t.render()
        .with_context(|| format!("rendering the NI template templates/ni/{name}.v"))
}

/// `text` without its final newline: a multi-line helper's output placed
/// on its own lines of a template.
pub fn block(mut text: String) -> String {
    if text.ends_with('\n') {
        text.pop();
    }
    text
}

/// `"{bits}'d0, "`: the zero padding in front of a narrower vector inside a
/// concatenation (empty for 0 bits).
pub fn pad(bits: usize) -> String {
    if bits == 0 {
        String::new()
    } else {
        format!("{bits}'d0, ")
    }
}

/// `reg [w-1:0] name;` (or `reg name;` for one bit), aligned like the
/// hand-written declarations.
pub fn reg(name: &str, width: usize) -> String {
    if width == 1 {
        format!("reg        {name};\n")
    } else {
        format!("reg {:>6} {name};\n", format!("[{}:0]", width - 1))
    }
}

/// A ring queue: `{name}_head`, `{name}_tail` (`abits` bits) and
/// `{name}_count` (`abits + 1` bits), moved by the 1-bit signals
/// `{name}_push` / `{name}_pop` (driven elsewhere), holding up to `depth`
/// entries (`1 <= depth <= 2^abits`); pointers wrap at `depth`. The entries
/// (`{name}_mem`, `width` bits, `2^abits` of them in distributed RAM, see
/// [`Queue::decl_mem`]) are written by the user at `{name}_tail`.
#[derive(Clone, Copy, Debug)]
pub struct Queue<'a> {
    /// Signal prefix.
    pub name: &'a str,
    /// Entry bits.
    pub width: usize,
    /// Pointer bits.
    pub abits: usize,
    /// Entries.
    pub depth: usize,
}

impl Queue<'_> {
    /// `{name}_mem`: `2^abits` entries of `width` bits in distributed RAM.
    pub fn decl_mem(&self) -> String {
        format!(
            "(* ram_style = \"distributed\" *)\nreg [{}:0] {}_mem [0:{}];\n",
            self.width - 1,
            self.name,
            (1usize << self.abits) - 1
        )
    }

    /// Declarations of the pointers and the count.
    pub fn decl_ptrs(&self) -> String {
        let (n, a) = (self.name, self.abits);
        format!(
            "reg [{}:0] {n}_head;\nreg [{}:0] {n}_tail;\nreg [{a}:0] {n}_count;\n",
            a - 1,
            a - 1
        )
    }

    /// The reset assignments (inside `if (reset) begin`).
    pub fn reset(&self) -> String {
        let (n, a) = (self.name, self.abits);
        format!(
            "        {n}_head <= {a}'d0;\n        {n}_tail <= {a}'d0;\n        {n}_count <= {}'d0;\n",
            a + 1
        )
    }

    /// The next pointer after `ptr`.
    fn next(&self, ptr: &str) -> String {
        let a = self.abits;
        if self.depth == 1 << a {
            format!("{ptr} + {a}'d1")
        } else {
            format!(
                "({ptr} == {a}'d{}) ? {a}'d0 : {ptr} + {a}'d1",
                self.depth - 1
            )
        }
    }

    /// The pointer and count updates (inside the `else` of the reset).
    pub fn update(&self) -> String {
        let (n, a) = (self.name, self.abits);
        let mut s = String::new();
        let _ = writeln!(
            s,
            "        if ({n}_push) {n}_tail <= {};",
            self.next(&format!("{n}_tail"))
        );
        let _ = writeln!(
            s,
            "        if ({n}_pop) {n}_head <= {};",
            self.next(&format!("{n}_head"))
        );
        let _ = writeln!(
            s,
            "        {n}_count <= {n}_count + {{{a}'d0, {n}_push}} - {{{a}'d0, {n}_pop}};"
        );
        s
    }
}

/// A bit slice `[hi:lo]` (`[b]` for one bit) of a vector: `lsb` and
/// `width`. A *marked* slice renders as `[«name»]` (the drift test).
#[derive(Clone, Copy, Debug)]
pub struct Bits {
    /// Least significant bit.
    pub lsb: usize,
    /// Bits.
    pub width: usize,
    name: &'static str,
    marked: bool,
}

impl Bits {
    /// `width` bits from `lsb`, named `name` when marked.
    pub fn new(lsb: usize, width: usize, name: &'static str, marked: bool) -> Bits {
        assert!(width > 0, "{name}: empty slice");
        Bits {
            lsb,
            width,
            name,
            marked,
        }
    }

    /// The most significant bit.
    pub fn hi(&self) -> usize {
        self.lsb + self.width - 1
    }

    /// The zero padding (`"N'd0, "`) that widens a value of this field to
    /// a 32-bit register word (a field from bit 0).
    pub fn pad32(&self) -> String {
        assert_eq!(self.lsb, 0, "{}: not a field from bit 0", self.name);
        pad(32 - self.width)
    }

    /// The low `n` bits of the slice (`n` by value or, from a template,
    /// by reference).
    pub fn low(&self, n: impl std::borrow::Borrow<usize>) -> Bits {
        let n = *n.borrow();
        assert!(n <= self.width);
        Bits { width: n, ..*self }
    }

    /// The bits of the slice from its bit `n` up.
    pub fn above(&self, n: impl std::borrow::Borrow<usize>) -> Bits {
        let n = *n.borrow();
        assert!(n < self.width);
        Bits {
            lsb: self.lsb + n,
            width: self.width - n,
            ..*self
        }
    }
}

impl std::fmt::Display for Bits {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.marked {
            write!(f, "[«{}»]", self.name)
        } else if self.width == 1 {
            write!(f, "[{}]", self.lsb)
        } else {
            write!(f, "[{}:{}]", self.hi(), self.lsb)
        }
    }
}

/// A vector assembled from expressions placed at bit slices (a register
/// word from golden fields): [`Word::part`] gives the concatenation's
/// body, most significant first, zeros in the gaps and in front of an
/// expression narrower than its slice.
#[derive(Clone, Debug)]
pub struct Word {
    bits: usize,
    /// `(slice, expression, expression bits)`.
    items: Vec<(Bits, String, usize)>,
}

impl Word {
    /// An empty `bits`-bit word.
    pub fn new(bits: usize) -> Word {
        Word {
            bits,
            items: Vec::new(),
        }
    }

    /// Place `expr` (`ewidth` bits, zero-extended) at `at`.
    pub fn put(mut self, at: Bits, expr: impl Into<String>, ewidth: usize) -> Word {
        assert!(ewidth <= at.width && at.hi() < self.bits);
        assert!(
            self.items
                .iter()
                .all(|(b, _, _)| b.hi() < at.lsb || at.hi() < b.lsb),
            "overlapping fields in a word"
        );
        self.items.push((at, expr.into(), ewidth));
        self
    }

    /// The concatenation body of bits `[hi-1:lo]` (a cut that no field
    /// crosses): `"2'd0, a, 4'd0, b"`.
    pub fn part(&self, hi: usize, lo: usize) -> String {
        let mut items: Vec<_> = self
            .items
            .iter()
            .filter(|(b, _, _)| b.lsb >= lo && b.hi() < hi)
            .collect();
        assert!(
            self.items
                .iter()
                .all(|(b, _, _)| b.hi() < lo || b.lsb >= hi || (b.lsb >= lo && b.hi() < hi)),
            "a field crosses the cut"
        );
        items.sort_by_key(|(b, _, _)| std::cmp::Reverse(b.lsb));
        let mut out = Vec::new();
        let mut top = hi;
        for (b, e, w) in items {
            if top > b.hi() + 1 {
                out.push(format!("{}'d0", top - b.hi() - 1));
            }
            if *w < b.width {
                out.push(format!("{}'d0", b.width - w));
            }
            out.push(e.clone());
            top = b.lsb;
        }
        if top > lo {
            out.push(format!("{}'d0", top - lo));
        }
        out.join(", ")
    }

    /// The whole word's concatenation body.
    pub fn text(&self) -> String {
        self.part(self.bits, 0)
    }
}

/// Named fields packed into one vector, first field in the most
/// significant bits: `(name, bits)`. [`Record::at`] gives a field's
/// slice (marked when the record is, for the drift test).
#[derive(Clone, Debug)]
pub struct Record {
    /// The fields, most significant first.
    pub fields: Vec<(&'static str, usize)>,
    /// Slices render marked.
    pub marked: bool,
}

impl Record {
    /// The record of `fields`, most significant first.
    pub fn new(fields: Vec<(&'static str, usize)>, marked: bool) -> Record {
        Record { fields, marked }
    }

    /// Total bits.
    pub fn width(&self) -> usize {
        self.fields.iter().map(|f| f.1).sum()
    }

    /// The bits of fields `from..=to` (`from` the more significant).
    pub fn bits(&self, from: &str, to: &str) -> Bits {
        let mut hi = self.width();
        let mut top = None;
        for &(f, w) in &self.fields {
            let lo = hi - w;
            if f == from {
                top = Some(hi);
            }
            if f == to {
                let top = top.unwrap_or_else(|| panic!("record field `{from}` not before `{to}`"));
                return Bits::new(lo, top - lo, f, self.marked);
            }
            hi = lo;
        }
        panic!("no record field `{to}`")
    }

    /// The slice of field `name`: `[hi:lo]` or `[b]`.
    pub fn at(&self, name: &str) -> Bits {
        self.bits(name, name)
    }

    /// The slice from field `from` down to field `to`.
    pub fn span(&self, from: &str, to: &str) -> Bits {
        self.bits(from, to)
    }

    /// `reg` declarations of `{prefix}{field}` for every field.
    pub fn decl(&self, prefix: &str) -> String {
        self.fields
            .iter()
            .map(|&(f, w)| reg(&format!("{prefix}{f}"), w))
            .collect()
    }

    /// `{prefix}{first}, {prefix}{second}, …` (a concatenation's body).
    pub fn concat(&self, prefix: &str) -> String {
        self.fields
            .iter()
            .map(|(f, _)| format!("{prefix}{f}"))
            .collect::<Vec<_>>()
            .join(", ")
    }

    /// Blocking assignments `{prefix}{field} = {vec}[hi:lo];` (one per
    /// line, four spaces in).
    pub fn unpack(&self, prefix: &str, vec: &str) -> String {
        let mut s = String::new();
        let mut hi = self.width();
        for &(f, w) in &self.fields {
            let lo = hi - w;
            if w == 1 {
                let _ = writeln!(s, "    {prefix}{f} = {vec}[{lo}];");
            } else {
                let _ = writeln!(s, "    {prefix}{f} = {vec}[{}:{lo}];", hi - 1);
            }
            hi = lo;
        }
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn queue_text() {
        let q = Queue {
            name: "xq",
            width: 7,
            abits: 2,
            depth: 3,
        };
        assert_eq!(
            q.decl_mem(),
            "(* ram_style = \"distributed\" *)\nreg [6:0] xq_mem [0:3];\n"
        );
        assert!(q
            .update()
            .contains("if (xq_push) xq_tail <= (xq_tail == 2'd2) ? 2'd0 : xq_tail + 2'd1;"));
        assert!(q
            .update()
            .contains("xq_count <= xq_count + {2'd0, xq_push} - {2'd0, xq_pop};"));
        let p = Queue { depth: 4, ..q };
        assert!(p
            .update()
            .contains("if (xq_pop) xq_head <= xq_head + 2'd1;"));
        assert!(p.reset().contains("xq_count <= 3'd0;"));
    }

    #[test]
    fn record_text() {
        let r = Record::new(vec![("a", 3), ("b", 1), ("c", 4)], false);
        assert_eq!(r.width(), 8);
        assert_eq!(r.concat("e_"), "e_a, e_b, e_c");
        assert_eq!(
            r.unpack("b_", "v"),
            "    b_a = v[7:5];\n    b_b = v[4];\n    b_c = v[3:0];\n"
        );
        assert_eq!(
            r.decl("e_"),
            "reg  [2:0] e_a;\nreg        e_b;\nreg  [3:0] e_c;\n"
        );
        assert_eq!(r.at("b").to_string(), "[4]");
        assert_eq!(r.span("b", "c").to_string(), "[4:0]");
        assert_eq!(pad(0), "");
        let w = Word::new(32)
            .put(Bits::new(16, 14, "t", false), "t", 14)
            .put(Bits::new(4, 4, "s", false), "s", 2)
            .put(Bits::new(0, 4, "k", false), "k", 4);
        assert_eq!(w.text(), "2'd0, t, 8'd0, 2'd0, s, k");
        assert_eq!(w.part(32, 8), "2'd0, t, 8'd0");
        assert_eq!(w.part(8, 0), "2'd0, s, k");
        assert_eq!(pad(3), "3'd0, ");
    }
}
