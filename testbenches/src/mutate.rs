//! Mutation operators over emitted Verilog: the mutants `exanet mutate`
//! runs a block's own bench against, one at a time.
//!
//! A mutant is one small edit of one line of one module of a point's
//! emitted RTL. The operators:
//!
//! | operator | edit |
//! |---|---|
//! | `and-or` | a binary `&` becomes `|`, and back |
//! | `eq-ne` | `==` becomes `!=`, and back |
//! | `relational` | `<` becomes `>=`, `>=` becomes `<`, `>` becomes `<=` |
//! | `plus-minus` | a binary `+` becomes `-`, and back |
//! | `constant` | a sized literal (`7'b101`, `4'd3`, `32'h1f`) plus or minus 1, within its width |
//! | `drop-not` | a `~` is removed |
//! | `invert-if` | `if (c)` becomes `if (!(c))` |
//! | `swap-mux` | `c ? a : b` becomes `c ? b : a` |
//! | `tie` | the value assigned to a valid/ready/credit signal becomes `'0`, or `'1` |
//! | `drop-assign` | an assignment is removed |
//!
//! Lines are skipped by rule, not silently (see [`SKIP_RULES`]): the rules
//! name what a mutation there could not tell about the bench (an edit of a
//! port list only fails the build; a clock forward only stops the design).

use exanet_hdl::emit::Emitted;
use serde::{Deserialize, Serialize};

/// The skip rules, in words, as the report lists them.
pub const SKIP_RULES: &[(&str, &str)] = &[
    (
        "structure",
        "module headers, port, reg/wire and instance declarations, port connections: an edit \
         there changes the interface and only fails the build",
    ),
    (
        "initial",
        "`initial` blocks: simulation start-up values and memory-clearing loops; every stateful \
         block has a synchronous reset the benches apply",
    ),
    (
        "system-task",
        "lines calling a system task (`$display`, `$readmemh`, …): simulation-only code",
    ),
    (
        "clock",
        "assignments that forward a clock (`x_clock = clock`): tying a clock stops the design, \
         which every bench catches at once",
    ),
    ("comment", "comments and compiler directives"),
    (
        "no-op-tie",
        "a `tie` to the value the line already assigns (`v = 1'b0` to `'0`; `v = 1'b1` to `'1` \
         for a one-bit `v`): no edit at all (counts mutants, not lines)",
    ),
];

/// What an edit does.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Operator {
    AndOr,
    EqNe,
    Relational,
    PlusMinus,
    Constant,
    DropNot,
    InvertIf,
    SwapMux,
    Tie,
    DropAssign,
}

/// One mutant: `before` becomes `after` on `line` (1-based) of `module`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Mutant {
    /// Module (file `module.v`).
    pub module: String,
    /// Line in the module's text, 1-based.
    pub line: usize,
    /// The operator.
    pub op: Operator,
    /// The line as emitted.
    pub before: String,
    /// The line as mutated.
    pub after: String,
}

impl Mutant {
    /// `module.v:line`.
    pub fn location(&self) -> String {
        format!("{}.v:{}", self.module, self.line)
    }

    /// The edit as a two-line diff.
    pub fn diff(&self) -> String {
        format!("- {}\n+ {}", self.before.trim(), self.after.trim())
    }
}

/// Lines skipped, per rule (name, count).
pub type Skipped = Vec<(&'static str, usize)>;

/// Every mutant of `e`, in module and line order, and how many lines each
/// skip rule passed over.
pub fn mutants(e: &Emitted) -> (Vec<Mutant>, Skipped) {
    let mut out = Vec::new();
    let mut skipped: Skipped = SKIP_RULES.iter().map(|(r, _)| (*r, 0)).collect();
    for (module, text) in &e.modules {
        let one_bit = one_bit_names(text);
        let mut initial_depth: Option<i32> = None;
        for (i, line) in text.lines().enumerate() {
            let rule = skip_rule(line, &mut initial_depth);
            if let Some(rule) = rule {
                if let Some(s) = skipped.iter_mut().find(|(r, _)| *r == rule) {
                    s.1 += 1;
                }
                continue;
            }
            for (op, after) in line_mutants(line) {
                if op == Operator::Tie && noop_tie(line, &after, &one_bit) {
                    if let Some(s) = skipped.iter_mut().find(|(r, _)| *r == "no-op-tie") {
                        s.1 += 1;
                    }
                    continue;
                }
                out.push(Mutant {
                    module: module.clone(),
                    line: i + 1,
                    op,
                    before: line.to_string(),
                    after,
                });
            }
        }
    }
    (out, skipped)
}

/// The names `text` declares one bit wide (`reg v;`, `output wire v,`:
/// a declaration without a range).
fn one_bit_names(text: &str) -> std::collections::HashSet<&str> {
    const KEYWORDS: &[&str] = &["input", "output", "inout", "reg", "wire", "logic", "signed"];
    let mut out = std::collections::HashSet::new();
    for l in text.lines() {
        let t = code(l).trim();
        let Some(first) = t.split_whitespace().next() else {
            continue;
        };
        if !KEYWORDS.contains(&first) || t.contains('[') {
            continue;
        }
        for part in t.split([',', ';']) {
            let decl = part.split('=').next().unwrap_or("");
            if let Some(name) = decl.split_whitespace().rfind(|w| !KEYWORDS.contains(w)) {
                if is_ident(name) {
                    out.insert(name);
                }
            }
        }
    }
    out
}

/// Whether the `tie` mutant `after` of `line` assigns the value the line
/// already assigns: `'0` over a literal zero (any width: it zero-extends),
/// `'1` over `'1` or over a one-bit literal one into a one-bit variable.
fn noop_tie(line: &str, after: &str, one_bit: &std::collections::HashSet<&str>) -> bool {
    let Some((lhs, rhs)) = assignment(code(line).trim()) else {
        return false;
    };
    let rhs = rhs.trim();
    let to_one = code(after).trim_end().ends_with("'1;");
    let lit = literals(rhs)
        .into_iter()
        .find(|&(at, len, ..)| at == 0 && len == rhs.len());
    match (to_one, rhs) {
        (false, "'0" | "0") | (true, "'1") => true,
        (false, _) => lit.is_some_and(|(.., value)| value == 0),
        (true, _) => lit.is_some_and(|(_, _, width, _, value)| {
            width == 1 && value == 1 && one_bit.contains(lhs)
        }),
    }
}

/// The Verilog module whose body holds mutant `m`: the name of the last
/// `module NAME` line at or above its line (a file may hold several
/// modules, as the router's single file does). `None` before any.
pub fn verilog_module(e: &Emitted, m: &Mutant) -> Option<String> {
    let (_, text) = e.modules.iter().find(|(n, _)| *n == m.module)?;
    module_of_lines(text).get(m.line - 1).cloned().flatten()
}

/// Per line of `text`, the Verilog module it lies in (one pass).
fn module_of_lines(text: &str) -> Vec<Option<String>> {
    let mut cur: Option<String> = None;
    text.lines()
        .map(|l| {
            if let Some(rest) = l.trim_start().strip_prefix("module ") {
                let name: String = rest
                    .trim_start()
                    .chars()
                    .take_while(|c| c.is_ascii_alphanumeric() || *c == '_' || *c == '$')
                    .collect();
                if !name.is_empty() {
                    cur = Some(name);
                }
            }
            cur.clone()
        })
        .collect()
}

/// The mutants of `all` inside a Verilog module whose name contains
/// `filter` (see [`verilog_module`]); a trailing `$` anchors it at the end
/// of the name (`_route$`: the route compute instances, not every module
/// of `exanet_router`).
pub fn filter_modules(e: &Emitted, all: Vec<Mutant>, filter: &str) -> Vec<Mutant> {
    let matches = |n: &str| match filter.strip_suffix('$') {
        Some(end) => n.ends_with(end),
        None => n.contains(filter),
    };
    let keep: Vec<(String, Vec<bool>)> = e
        .modules
        .iter()
        .map(|(file, text)| {
            let lines = module_of_lines(text)
                .iter()
                .map(|n| n.as_deref().is_some_and(matches))
                .collect();
            (file.clone(), lines)
        })
        .collect();
    all.into_iter()
        .filter(|m| {
            keep.iter()
                .find(|(f, _)| *f == m.module)
                .and_then(|(_, lines)| lines.get(m.line - 1))
                .copied()
                .unwrap_or(false)
        })
        .collect()
}

/// `e` with mutant `m` applied.
pub fn apply(e: &Emitted, m: &Mutant) -> Emitted {
    let mut out = e.clone();
    if let Some((_, text)) = out.modules.iter_mut().find(|(n, _)| *n == m.module) {
        let mut lines: Vec<&str> = text.lines().collect();
        if let Some(l) = lines.get_mut(m.line - 1) {
            *l = &m.after;
        }
        let mut t = lines.join("\n");
        t.push('\n');
        *text = t;
    }
    out
}

/// Which skip rule `line` falls under, if any; tracks `initial` blocks.
fn skip_rule(line: &str, initial_depth: &mut Option<i32>) -> Option<&'static str> {
    let t = line.trim();
    let opens = word_count(t, "begin") as i32;
    let closes = word_count(t, "end") as i32;
    if let Some(d) = initial_depth {
        *d += opens - closes;
        if *d <= 0 {
            *initial_depth = None;
        }
        return Some("initial");
    }
    if t.starts_with("initial") {
        if opens > closes {
            *initial_depth = Some(opens - closes);
        }
        return Some("initial");
    }
    if t.is_empty() || t.starts_with("//") || t.starts_with('`') || t.starts_with("(*") {
        return Some("comment");
    }
    if t.contains('$') {
        return Some("system-task");
    }
    const DECL: &[&str] = &[
        "module",
        "endmodule",
        "input",
        "output",
        "inout",
        "reg",
        "wire",
        "integer",
        "genvar",
        "function",
        "endfunction",
        ".",
        ");",
    ];
    if DECL.iter().any(|d| starts_with_word(t, d)) || is_instance_header(t) {
        return Some("structure");
    }
    if let Some((lhs, rhs)) = assignment(t) {
        if lhs.ends_with("clock") && rhs.trim() == "clock" {
            return Some("clock");
        }
    }
    None
}

/// `name name(` — a module instance.
fn is_instance_header(t: &str) -> bool {
    let mut it = t.split_whitespace();
    match (it.next(), it.next()) {
        (Some(a), Some(b)) => {
            is_ident(a)
                && b.ends_with('(')
                && is_ident(b.trim_end_matches('('))
                && !["if", "else", "case", "always", "assign", "for"].contains(&a)
        }
        _ => false,
    }
}

fn is_ident(s: &str) -> bool {
    !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '$')
        && !s.starts_with(|c: char| c.is_ascii_digit())
}

fn starts_with_word(t: &str, w: &str) -> bool {
    t.starts_with(w)
        && (w == "."
            || w == ");"
            || !t[w.len()..].starts_with(|c: char| c.is_alphanumeric() || c == '_'))
}

/// Occurrences of `w` as a whole word in `t`.
fn word_count(t: &str, w: &str) -> usize {
    t.split(|c: char| !(c.is_alphanumeric() || c == '_'))
        .filter(|x| *x == w)
        .count()
}

/// `lhs = rhs;` or `lhs <= rhs;` (blocking or non-blocking, `assign` too):
/// the left-hand side and the right-hand side without the `;`.
fn assignment(t: &str) -> Option<(&str, &str)> {
    let t = t.strip_prefix("assign ").unwrap_or(t);
    let body = t.strip_suffix(';')?;
    let (lhs, rhs) = if let Some(i) = body.find("<=") {
        (&body[..i], &body[i + 2..])
    } else {
        let i = body.find('=')?;
        if body[i + 1..].starts_with('=') {
            return None;
        }
        (&body[..i], &body[i + 1..])
    };
    let name = lhs.trim();
    let base = name.split('[').next().unwrap_or(name);
    is_ident(base).then_some((name, rhs))
}

/// The code part of a line (before a `//` comment) and its offset.
fn code(line: &str) -> &str {
    match line.find("//") {
        Some(i) => &line[..i],
        None => line,
    }
}

/// Whether the character before `i` ends an operand (so an operator at `i`
/// is binary, not unary/reduction).
fn after_operand(s: &[u8], i: usize) -> bool {
    s[..i]
        .iter()
        .rev()
        .find(|c| !c.is_ascii_whitespace())
        .is_some_and(|&c| {
            c.is_ascii_alphanumeric() || c == b'_' || c == b')' || c == b']' || c == b'}'
        })
}

/// Every mutant of one (non-skipped) line.
fn line_mutants(line: &str) -> Vec<(Operator, String)> {
    let c = code(line);
    let b = c.as_bytes();
    let mut out = Vec::new();
    let rhs_start = assignment(c.trim())
        .map(|(_, rhs)| c.len() - rhs.len() - 1)
        .unwrap_or(0);
    let is_localparam =
        c.trim_start().starts_with("localparam") || c.trim_start().starts_with("parameter");
    let edit = |at: usize, len: usize, with: &str| -> String {
        format!("{}{}{}", &line[..at], with, &line[at + len..])
    };
    // Sized literals: value ± 1 (localparam values included).
    for (at, len, width, base, value) in literals(c) {
        let max = if width >= 128 {
            u128::MAX
        } else {
            (1u128 << width) - 1
        };
        let radix = match base {
            'b' => 2,
            'd' => 10,
            _ => 16,
        };
        let fmt = |v: u128| match radix {
            2 => format!("{width}'b{v:b}"),
            10 => format!("{width}'d{v}"),
            _ => format!("{width}'h{v:x}"),
        };
        if value < max {
            out.push((Operator::Constant, edit(at, len, &fmt(value + 1))));
        }
        if value > 0 {
            out.push((Operator::Constant, edit(at, len, &fmt(value - 1))));
        }
    }
    if is_localparam {
        return out;
    }
    let mut i = 0;
    while i < b.len() {
        let rest = &c[i..];
        let two = rest.get(..2).unwrap_or("");
        match b[i] {
            b'&' | b'|'
                if two != "&&"
                    && two != "||"
                    && after_operand(b, i)
                    && !(i > 0 && (b[i - 1] == b'&' || b[i - 1] == b'|' || b[i - 1] == b'~')) =>
            {
                let to = if b[i] == b'&' { "|" } else { "&" };
                out.push((Operator::AndOr, edit(i, 1, to)));
            }
            b'=' if two == "=="
                && !rest.starts_with("===")
                && !(i > 0 && matches!(b[i - 1], b'!' | b'=' | b'<' | b'>')) =>
            {
                out.push((Operator::EqNe, edit(i, 2, "!=")));
                i += 1;
            }
            b'!' if two == "!=" && !rest.starts_with("!==") => {
                out.push((Operator::EqNe, edit(i, 2, "==")));
                i += 1;
            }
            b'<' if i > rhs_start && two != "<<" && two != "<=" && !(i > 0 && b[i - 1] == b'<') => {
                out.push((Operator::Relational, edit(i, 1, ">=")));
            }
            b'>' if two == ">=" => {
                out.push((Operator::Relational, edit(i, 2, "<")));
                i += 1;
            }
            b'>' if two != ">>" && !(i > 0 && matches!(b[i - 1], b'>' | b'-' | b'=')) => {
                out.push((Operator::Relational, edit(i, 1, "<=")));
            }
            b'+' | b'-'
                if after_operand(b, i) && !rest.starts_with("+:") && !rest.starts_with("-:") =>
            {
                let to = if b[i] == b'+' { "-" } else { "+" };
                out.push((Operator::PlusMinus, edit(i, 1, to)));
            }
            b'~' if !matches!(b.get(i + 1), Some(b'^' | b'&' | b'|')) => {
                out.push((Operator::DropNot, edit(i, 1, "")));
            }
            _ => {}
        }
        i += 1;
    }
    let t = c.trim_start();
    let indent = c.len() - t.len();
    // if (c) → if (!(c))
    if let Some(rest) = t
        .strip_prefix("if (")
        .or_else(|| t.strip_prefix("else if ("))
    {
        let open = indent + (t.len() - rest.len()) - 1;
        if let Some(close) = matching_paren(b, open) {
            let cond = &c[open + 1..close];
            out.push((
                Operator::InvertIf,
                edit(open, close - open + 1, &format!("(!({cond}))")),
            ));
        }
    }
    if let Some((lhs, rhs)) = assignment(c.trim()) {
        let rhs_at = c.rfind(rhs).unwrap_or(0);
        // c ? a : b → c ? b : a (one top-level ternary)
        if let Some((q, colon)) = ternary(rhs) {
            let (a, bb) = (&rhs[q + 1..colon], &rhs[colon + 1..]);
            let swapped = format!("{}? {} : {}", &rhs[..q], bb.trim(), a.trim());
            out.push((Operator::SwapMux, edit(rhs_at, rhs.len(), &swapped)));
        }
        let lower = lhs.to_ascii_lowercase();
        if ["valid", "ready", "credit", "vld", "rdy"]
            .iter()
            .any(|k| lower.contains(k))
        {
            out.push((Operator::Tie, edit(rhs_at, rhs.len(), " '0")));
            out.push((Operator::Tie, edit(rhs_at, rhs.len(), " '1")));
        }
        out.push((
            Operator::DropAssign,
            format!("{}// mutant: assignment dropped", &line[..indent]),
        ));
    }
    out
}

/// Sized literals in `c`: (offset, length, width, base, value).
fn literals(c: &str) -> Vec<(usize, usize, u32, char, u128)> {
    let b = c.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        if b[i].is_ascii_digit()
            && (i == 0
                || !(b[i - 1].is_ascii_alphanumeric() || b[i - 1] == b'_' || b[i - 1] == b'\''))
        {
            let start = i;
            while i < b.len() && b[i].is_ascii_digit() {
                i += 1;
            }
            if i + 1 < b.len() && b[i] == b'\'' && matches!(b[i + 1], b'b' | b'd' | b'h') {
                let width: u32 = c[start..i].parse().unwrap_or(0);
                let base = b[i + 1] as char;
                let mut j = i + 2;
                while j < b.len() && (b[j].is_ascii_hexdigit() || b[j] == b'_') {
                    j += 1;
                }
                let digits: String = c[i + 2..j].chars().filter(|&ch| ch != '_').collect();
                let radix = match base {
                    'b' => 2,
                    'd' => 10,
                    _ => 16,
                };
                if (1..=128).contains(&width) && !digits.is_empty() {
                    if let Ok(v) = u128::from_str_radix(&digits, radix) {
                        out.push((start, j - start, width, base, v));
                    }
                }
                i = j;
                continue;
            }
        }
        i += 1;
    }
    out
}

/// The `)` matching the `(` at `open`.
fn matching_paren(b: &[u8], open: usize) -> Option<usize> {
    let mut depth = 0;
    for (i, &ch) in b.iter().enumerate().skip(open) {
        match ch {
            b'(' => depth += 1,
            b')' => {
                depth -= 1;
                if depth == 0 {
                    return Some(i);
                }
            }
            _ => {}
        }
    }
    None
}

/// Offsets of the `?` and `:` of `s`'s one top-level ternary (none when
/// there are several or they nest).
fn ternary(s: &str) -> Option<(usize, usize)> {
    let mut depth = 0i32;
    let (mut q, mut colon) = (None, None);
    for (i, ch) in s.char_indices() {
        match ch {
            '(' | '[' | '{' => depth += 1,
            ')' | ']' | '}' => depth -= 1,
            '?' if depth == 0 => {
                if q.is_some() {
                    return None;
                }
                q = Some(i);
            }
            ':' if depth == 0 => {
                if colon.is_some() {
                    return None;
                }
                colon = Some(i);
            }
            _ => {}
        }
    }
    match (q, colon) {
        (Some(q), Some(c)) if q < c => Some((q, c)),
        _ => None,
    }
}

/// A deterministic sample of `n` of `all` from `seed` (all of them when
/// `n` is 0 or at least their number), in their original order.
pub fn sample(all: &[Mutant], n: usize, seed: u64) -> Vec<Mutant> {
    if n == 0 || n >= all.len() {
        return all.to_vec();
    }
    let mut rng = exanet_sim::rng::Rng::new(seed);
    let mut idx: Vec<usize> = (0..all.len()).collect();
    for i in 0..n {
        let j = i + rng.below((all.len() - i) as u64) as usize;
        idx.swap(i, j);
    }
    let mut pick = idx[..n].to_vec();
    pick.sort_unstable();
    pick.into_iter().map(|i| all[i].clone()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ops(line: &str) -> Vec<(Operator, String)> {
        line_mutants(line)
    }

    fn has(line: &str, op: Operator, after: &str) -> bool {
        ops(line).iter().any(|(o, a)| *o == op && a == after)
    }

    #[test]
    fn binary_operators_are_swapped_and_unary_ones_left() {
        let l = "        masked = req & mask_q;";
        assert!(has(l, Operator::AndOr, "        masked = req | mask_q;"));
        let l = "        if (|masked) begin";
        assert!(
            !ops(l).iter().any(|(o, _)| *o == Operator::AndOr),
            "reduction |"
        );
        let l = "        x = a && b;";
        assert!(!ops(l).iter().any(|(o, _)| *o == Operator::AndOr));
        let l = "        pick = m & (~m + one_n);";
        assert!(has(
            l,
            Operator::PlusMinus,
            "        pick = m & (~m - one_n);"
        ));
        assert!(has(l, Operator::DropNot, "        pick = m & (m + one_n);"));
        let l = "        y = a - 4'd1;";
        assert!(has(l, Operator::PlusMinus, "        y = a + 4'd1;"));
        assert!(has(l, Operator::Constant, "        y = a - 4'd2;"));
        assert!(has(l, Operator::Constant, "        y = a - 4'd0;"));
    }

    #[test]
    fn comparisons_conditions_and_muxes() {
        let l = "        if (count == max) begin";
        assert!(has(l, Operator::EqNe, "        if (count != max) begin"));
        assert!(has(
            l,
            Operator::InvertIf,
            "        if (!(count == max)) begin"
        ));
        let l = "        full = count >= limit;";
        assert!(has(
            l,
            Operator::Relational,
            "        full = count < limit;"
        ));
        let l = "        q <= d;";
        assert!(
            !ops(l).iter().any(|(o, _)| *o == Operator::Relational),
            "non-blocking assignment"
        );
        let l = "        o = sel ? a : b;";
        assert!(has(l, Operator::SwapMux, "        o = sel ? b : a;"));
        let l = "        out_valid = head & ready;";
        assert!(has(l, Operator::Tie, "        out_valid = '0;"));
        assert!(has(l, Operator::Tie, "        out_valid = '1;"));
        assert!(has(
            l,
            Operator::DropAssign,
            "        // mutant: assignment dropped"
        ));
    }

    #[test]
    fn constants_stay_within_their_width() {
        assert!(has(
            "    localparam one = 1'b1;",
            Operator::Constant,
            "    localparam one = 1'b0;"
        ));
        assert!(!ops("    localparam one = 1'b1;")
            .iter()
            .any(|(_, a)| a.contains("1'b10")));
        assert!(has(
            "        x = 8'hff;",
            Operator::Constant,
            "        x = 8'hfe;"
        ));
        assert_eq!(
            ops("        x = 8'hff;")
                .iter()
                .filter(|(o, _)| *o == Operator::Constant)
                .count(),
            1
        );
    }

    #[test]
    fn skip_rules_pass_over_structure_initial_and_clocks() {
        let text = "module m(clock, a, y);\n    input wire clock;\n    output reg [3:0] y;\n    sub u(\n        .a(a),\n    );\n    initial begin\n        y = 4'd0;\n    end\n    always @(*) begin\n        u_clock = clock;\n        y = a + 4'd1;\n        $display(\"x\");\n    end\nendmodule\n";
        let e = Emitted {
            top: "m".into(),
            modules: vec![("m".into(), text.into())],
        };
        let (ms, skipped) = mutants(&e);
        assert!(
            ms.iter()
                .all(|m| m.line == 12 || m.line == 10 || m.line == 14),
            "{ms:#?}"
        );
        assert!(ms
            .iter()
            .any(|m| m.line == 12 && m.op == Operator::PlusMinus));
        let count = |r: &str| skipped.iter().find(|(n, _)| *n == r).unwrap().1;
        assert_eq!(count("initial"), 3);
        assert_eq!(count("clock"), 1);
        assert_eq!(count("system-task"), 1);
        assert!(count("structure") >= 5);
        let m = ms.iter().find(|m| m.op == Operator::PlusMinus).unwrap();
        let a = apply(&e, m);
        assert!(a.modules[0].1.contains("y = a - 4'd1;"));
        assert_eq!(a.modules[0].1.lines().count(), text.lines().count());
    }

    #[test]
    fn ties_to_the_value_already_assigned_are_skipped_by_rule() {
        let text = "module m(a, v, w, c);\n    output reg v;\n    output reg [3:0] w;\n    reg  credit_q, x_valid;\n    always @(*) begin\n        v_valid = 1'b0;\n        credit_q = 1'b1;\n        w_ready = 1'b1;\n        x_valid = a & c;\n        w_valid = 4'h0;\n    end\nendmodule\n";
        let e = Emitted {
            top: "m".into(),
            modules: vec![("m".into(), text.into())],
        };
        let (ms, skipped) = mutants(&e);
        let ties: Vec<(usize, &str)> = ms
            .iter()
            .filter(|m| m.op == Operator::Tie)
            .map(|m| (m.line, m.after.trim()))
            .collect();
        // line 6: `'0` is no edit, `'1` is one; line 7: one-bit `credit_q`,
        // `'1` is no edit; line 8: `w_ready` is not declared one bit wide,
        // so `'1` (all ones) differs from `1'b1`; line 9: both edits;
        // line 10: a 4-bit zero.
        assert_eq!(
            ties,
            vec![
                (6, "v_valid = '1;"),
                (7, "credit_q = '0;"),
                (8, "w_ready = '0;"),
                (8, "w_ready = '1;"),
                (9, "x_valid = '0;"),
                (9, "x_valid = '1;"),
                (10, "w_valid = '1;"),
            ]
        );
        let n = skipped.iter().find(|(r, _)| *r == "no-op-tie").unwrap().1;
        assert_eq!(n, 3);
    }

    #[test]
    fn mutants_are_filtered_by_their_verilog_module() {
        let text = "module top(a, y);\n    always @(*) begin\n        y = a + 4'd1;\n    end\nendmodule\nmodule top_route_compute(a, y);\n    always @(*) begin\n        y = a - 4'd2;\n    end\nendmodule\n";
        let e = Emitted {
            top: "top".into(),
            modules: vec![("top".into(), text.into())],
        };
        let (all, _) = mutants(&e);
        let names: Vec<Option<String>> = all.iter().map(|m| verilog_module(&e, m)).collect();
        assert!(names.contains(&Some("top".into())));
        assert!(names.contains(&Some("top_route_compute".into())));
        let rc = filter_modules(&e, all.clone(), "route");
        assert!(!rc.is_empty() && rc.len() < all.len());
        assert!(rc.iter().all(|m| m.line > 5 && m.before.contains("4'd2")));
        assert_eq!(filter_modules(&e, all.clone(), "_compute$"), rc);
        assert!(filter_modules(&e, all.clone(), "top$").len() < all.len());
        assert!(filter_modules(&e, all, "nosuch").is_empty());
    }

    #[test]
    fn samples_are_deterministic_subsets() {
        let all: Vec<Mutant> = (0..50)
            .map(|i| Mutant {
                module: "m".into(),
                line: i + 1,
                op: Operator::DropAssign,
                before: String::new(),
                after: String::new(),
            })
            .collect();
        let a = sample(&all, 10, 7);
        assert_eq!(a, sample(&all, 10, 7));
        assert_eq!(a.len(), 10);
        assert!(a.windows(2).all(|w| w[0].line < w[1].line));
        assert_ne!(a, sample(&all, 10, 8));
        assert_eq!(sample(&all, 0, 1).len(), 50);
    }
}
