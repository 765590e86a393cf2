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

/// Named fields packed into one vector, first field in the most
/// significant bits: `(name, bits)`.
#[derive(Clone, Debug)]
pub struct Record {
    /// The fields, most significant first.
    pub fields: Vec<(&'static str, usize)>,
}

impl Record {
    /// Total bits.
    pub fn width(&self) -> usize {
        self.fields.iter().map(|f| f.1).sum()
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
        let r = Record {
            fields: vec![("a", 3), ("b", 1), ("c", 4)],
        };
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
        assert_eq!(pad(0), "");
        assert_eq!(pad(3), "3'd0, ");
    }
}
