//! `xor_net`: a linear map over GF(2) (each output the XOR of a set of
//! inputs, e.g. a CRC-32 step over a 64-bit word) as a network of XOR
//! wires of at most six inputs, groups common to several outputs shared.
//!
//! Why: written as one `^(x & mask)` per output, Yosys/ABC maps the link's
//! 96-input CRC step to ~610 LUTs (its delay-driven mapping duplicates
//! shared XOR nodes and spends MUXF7/8 on wide cuts), more than twice the
//! ~290 LUT6 of a plain tree. Each wire here is one LUT6 (the templates
//! mark them `(* keep *)`, so ABC keeps them as cut boundaries), and the
//! greedy sharing (a 4..6-input group present in several outputs becomes
//! one wire) brings the step to ~110 such wires plus the per-output XOR of
//! them (measured in `BENCHMARKS.md`, "link end LUT budget").
//!
//! The network is deterministic (ties broken by index) and checked against
//! the rows it was built from ([`XorNet::eval`], tests below).

use std::collections::BTreeMap;

/// Inputs of one LUT.
const LUT_INPUTS: usize = 6;
/// Smallest shared group worth a wire of its own.
const MIN_SHARED: usize = 4;
/// Candidate pairs grown into groups per round (the most frequent ones).
const SEEDS: usize = 40;

/// One XOR operand: a primary input or an earlier wire.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Term {
    /// Input `i` of the map.
    Input(usize),
    /// Wire `i` of the network.
    Wire(usize),
}

/// The network: `wires[i]` is the XOR of its terms (inputs only, at most
/// six); output `o` is the XOR of `outs[o]` (empty: constant 0).
#[derive(Clone, Debug)]
pub struct XorNet {
    /// The shared and per-output XOR wires, each over at most 6 inputs.
    pub wires: Vec<Vec<Term>>,
    /// Each output's terms.
    pub outs: Vec<Vec<Term>>,
}

impl XorNet {
    /// The network for `rows` (`rows[o]`: the inputs output `o` XORs; an
    /// input listed twice cancels).
    pub fn build(rows: &[Vec<usize>]) -> XorNet {
        let mut left: Vec<Vec<usize>> = rows
            .iter()
            .map(|r| {
                let mut c: BTreeMap<usize, bool> = BTreeMap::new();
                for &i in r {
                    *c.entry(i).or_default() ^= true;
                }
                c.into_iter()
                    .filter(|&(_, odd)| odd)
                    .map(|(i, _)| i)
                    .collect()
            })
            .collect();
        let mut net = XorNet {
            wires: Vec::new(),
            outs: vec![Vec::new(); rows.len()],
        };
        // Shared groups, the one saving the most XOR inputs first.
        while let Some((group, users)) = best_group(&left) {
            let w = net.wires.len();
            net.wires
                .push(group.iter().map(|&i| Term::Input(i)).collect());
            for &o in &users {
                left[o].retain(|i| !group.contains(i));
                net.outs[o].push(Term::Wire(w));
            }
        }
        // The rest of each output in chunks of up to six.
        for (o, rest) in left.iter().enumerate() {
            for chunk in rest.chunks(LUT_INPUTS) {
                if chunk.len() == 1 {
                    net.outs[o].push(Term::Input(chunk[0]));
                } else {
                    let w = net.wires.len();
                    net.wires
                        .push(chunk.iter().map(|&i| Term::Input(i)).collect());
                    net.outs[o].push(Term::Wire(w));
                }
            }
        }
        net
    }

    /// The outputs for `inputs` (what the emitted Verilog computes).
    pub fn eval(&self, inputs: &[bool]) -> Vec<bool> {
        let mut w = Vec::with_capacity(self.wires.len());
        let term = |t: &Term, w: &[bool]| match *t {
            Term::Input(i) => inputs[i],
            Term::Wire(i) => w[i],
        };
        for terms in &self.wires {
            let v = terms.iter().fold(false, |a, t| a ^ term(t, &w));
            w.push(v);
        }
        self.outs
            .iter()
            .map(|terms| terms.iter().fold(false, |a, t| a ^ term(t, &w)))
            .collect()
    }

    /// Verilog text: `(declaration, expression)` per wire, named
    /// `<prefix><i>`, and each output's expression (`1'b0` when empty);
    /// `input(i)` names input `i`.
    pub fn verilog(
        &self,
        prefix: &str,
        input: impl Fn(usize) -> String,
    ) -> (Vec<(String, String)>, Vec<String>) {
        let name = |t: &Term| match *t {
            Term::Input(i) => input(i),
            Term::Wire(i) => format!("{prefix}{i}"),
        };
        let join = |terms: &[Term]| {
            if terms.is_empty() {
                "1'b0".to_string()
            } else {
                terms.iter().map(name).collect::<Vec<_>>().join(" ^ ")
            }
        };
        let wires = self
            .wires
            .iter()
            .enumerate()
            .map(|(i, t)| (format!("{prefix}{i}"), join(t)))
            .collect();
        let outs = self.outs.iter().map(|t| join(t)).collect();
        (wires, outs)
    }
}

/// The group of 4..6 inputs, present in two or more rows, that saves the
/// most XOR operands (`(size - 1) · (users - 1)`), grown greedily from the
/// most frequent input pairs; `None` when no such group is left.
fn best_group(left: &[Vec<usize>]) -> Option<(Vec<usize>, Vec<usize>)> {
    let mut pairs: BTreeMap<(usize, usize), usize> = BTreeMap::new();
    for r in left {
        for (k, &a) in r.iter().enumerate() {
            for &b in &r[k + 1..] {
                *pairs.entry((a, b)).or_default() += 1;
            }
        }
    }
    let mut seeds: Vec<((usize, usize), usize)> =
        pairs.into_iter().filter(|&(_, c)| c >= 2).collect();
    seeds.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    seeds.truncate(SEEDS);
    let mut best: Option<(usize, Vec<usize>, Vec<usize>)> = None;
    for ((a, b), _) in seeds {
        let mut group = vec![a, b];
        let mut users: Vec<usize> = (0..left.len())
            .filter(|&o| left[o].contains(&a) && left[o].contains(&b))
            .collect();
        while group.len() < LUT_INPUTS {
            let mut count: BTreeMap<usize, usize> = BTreeMap::new();
            for &o in &users {
                for &i in &left[o] {
                    if !group.contains(&i) {
                        *count.entry(i).or_default() += 1;
                    }
                }
            }
            // Most users, then the lowest input.
            let Some((i, c)) = count
                .into_iter()
                .max_by(|x, y| x.1.cmp(&y.1).then(y.0.cmp(&x.0)))
            else {
                break;
            };
            if c < 2 {
                break;
            }
            group.push(i);
            users.retain(|&o| left[o].contains(&i));
        }
        let score = (group.len() - 1) * (users.len() - 1);
        if users.len() >= 2
            && group.len() >= MIN_SHARED
            && best.as_ref().is_none_or(|(s, _, _)| score > *s)
        {
            group.sort_unstable();
            best = Some((score, group, users));
        }
    }
    best.map(|(_, g, u)| (g, u))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A small deterministic generator (xorshift) for test vectors.
    fn next(s: &mut u64) -> u64 {
        *s ^= *s << 13;
        *s ^= *s >> 7;
        *s ^= *s << 17;
        *s
    }

    fn direct(rows: &[Vec<usize>], x: &[bool]) -> Vec<bool> {
        rows.iter()
            .map(|r| r.iter().fold(false, |a, &i| a ^ x[i]))
            .collect()
    }

    #[test]
    fn random_maps_match_their_rows_and_wires_fit_a_lut() {
        let mut s = 0x1234_5678_9abc_def1u64;
        for trial in 0..20 {
            let (n_in, n_out) = (8 + trial * 5, 1 + trial * 2);
            let rows: Vec<Vec<usize>> = (0..n_out)
                .map(|_| {
                    (0..n_in)
                        .filter(|_| next(&mut s).is_multiple_of(2))
                        .collect()
                })
                .collect();
            let net = XorNet::build(&rows);
            for w in &net.wires {
                assert!(
                    w.len() >= 2 && w.len() <= LUT_INPUTS,
                    "wire of {} inputs",
                    w.len()
                );
                assert!(w.iter().all(|t| matches!(t, Term::Input(_))));
            }
            for _ in 0..50 {
                let x: Vec<bool> = (0..n_in).map(|_| next(&mut s) % 2 == 1).collect();
                assert_eq!(net.eval(&x), direct(&rows, &x), "trial {trial}");
            }
        }
    }

    #[test]
    fn shared_groups_are_found_and_repeated_inputs_cancel() {
        let rows = vec![vec![0, 1, 2, 3, 4, 9], vec![0, 1, 2, 3, 4, 7, 7, 8], vec![]];
        let net = XorNet::build(&rows);
        assert_eq!(net.wires[0], (0..5).map(Term::Input).collect::<Vec<_>>());
        assert_eq!(net.outs[0], vec![Term::Wire(0), Term::Input(9)]);
        assert_eq!(net.outs[1], vec![Term::Wire(0), Term::Input(8)]);
        assert!(net.outs[2].is_empty());
        let (w, o) = net.verilog("k", |i| format!("x[{i}]"));
        assert_eq!(
            w[0],
            ("k0".into(), "x[0] ^ x[1] ^ x[2] ^ x[3] ^ x[4]".into())
        );
        assert_eq!(o, vec!["k0 ^ x[9]", "k0 ^ x[8]", "1'b0"]);
    }
}
