//! A job's communication profile: its ranks and, per iteration, phases of
//! messages. Phase `p + 1` starts when every message of phase `p` has been
//! received; the next iteration's phase 0 waits for this one's last phase.
//!
//! # Built-in generators
//! * [`Profile::halo3d`] (LAMMPS-like, regular): ranks on the most cubic
//!   `px × py × pz` grid (periodic); three phases, x then y then z, in
//!   which every rank sends `face_bytes` to both neighbours of that
//!   dimension (a dimension of one rank has no phase).
//! * [`Profile::dataflow`] (NPB-DT-like, irregular): ranks in layers of
//!   `ceil(sqrt(ranks))`; every rank of a layer sends to two ranks of the
//!   next layer, picked at random from the seed (every rank of the next
//!   layer gets at least one), with 1 to 4 × `bytes` each; one phase per
//!   layer boundary, so data flows through the graph layer by layer.
//! * [`Profile::allreduce`]: one allreduce of `vector_bytes` per iteration,
//!   the golden allreduce engine's schedule ([`crate::allreduce::schedule`]:
//!   recursive doubling, or reduce-scatter + allgather above `threshold`,
//!   with the pre/post steps of a non-power-of-two rank count); one phase
//!   per step index, 8-byte elements.
//!
//! # File formats
//! CSV (`.csv`), one message per line, `#` comments and blank lines
//! skipped:
//! ```text
//! ranks,4                 # first line: the rank count
//! phase,src,dst,bytes     # optional header
//! 0,0,1,4096              # phase (0, 1, 2, ... in order, no gaps), ranks, bytes > 0
//! 0,1,0,4096
//! 1,2,3,65536
//! ```
//! JSON (`.json`): `{"ranks": 4, "phases": [[{"src": 0, "dst": 1, "bytes": 4096}, ...], ...]}`.
//!
//! Errors name the file and line (CSV: line and field; JSON: line and
//! column of a syntax or type error, the element path `phases[i][j].field`
//! of a value that breaks a rule).

use crate::allreduce::schedule::{steps, Algorithm};
use crate::rng::Rng;
use anyhow::{bail, Context, Result};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Largest rank count of one job.
pub const MAX_RANKS: usize = 1 << 16;

/// One message of one phase.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Message {
    /// Sending rank.
    pub src: usize,
    /// Receiving rank.
    pub dst: usize,
    /// Payload bytes.
    pub bytes: u64,
}

/// Ranks and the phases of one iteration.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Profile {
    /// What generated it (`halo3d`, `dataflow`, `allreduce`, a file name).
    #[serde(default)]
    pub name: String,
    /// Number of ranks.
    pub ranks: usize,
    /// Phases of one iteration, in order.
    pub phases: Vec<Vec<Message>>,
}

/// Three factors of `n`, as close to a cube as possible (largest first).
pub fn grid3(n: usize) -> [usize; 3] {
    let mut best = [n, 1, 1];
    let mut score = usize::MAX;
    for a in 1..=n {
        if !n.is_multiple_of(a) {
            continue;
        }
        for b in 1..=n / a {
            if !(n / a).is_multiple_of(b) {
                continue;
            }
            let c = n / a / b;
            let mut g = [a, b, c];
            g.sort_unstable_by(|x, y| y.cmp(x));
            // Smallest surface (sum of pairwise products) = most cubic.
            let s = g[0] * g[1] + g[1] * g[2] + g[0] * g[2];
            if s < score {
                score = s;
                best = g;
            }
        }
    }
    best
}

impl Profile {
    /// 3D halo exchange of `ranks` ranks, `face_bytes` to each neighbour.
    pub fn halo3d(ranks: usize, face_bytes: u64) -> Result<Profile> {
        check_ranks(ranks)?;
        let g = grid3(ranks);
        let at = |c: [usize; 3]| c[0] + g[0] * (c[1] + g[1] * c[2]);
        let mut phases = Vec::new();
        for d in 0..3 {
            if g[d] == 1 {
                continue;
            }
            let mut phase = Vec::new();
            for r in 0..ranks {
                let c = [r % g[0], (r / g[0]) % g[1], r / (g[0] * g[1])];
                for step in [1, g[d] - 1] {
                    let mut n = c;
                    n[d] = (c[d] + step) % g[d];
                    phase.push(Message {
                        src: r,
                        dst: at(n),
                        bytes: face_bytes,
                    });
                }
            }
            phases.push(phase);
        }
        Profile {
            name: "halo3d".into(),
            ranks,
            phases,
        }
        .checked()
    }

    /// Layered data-flow graph of `ranks` ranks (see the module doc).
    pub fn dataflow(ranks: usize, bytes: u64, seed: u64) -> Result<Profile> {
        check_ranks(ranks)?;
        let width = (ranks as f64).sqrt().ceil() as usize;
        let layers: Vec<Vec<usize>> = (0..ranks)
            .collect::<Vec<_>>()
            .chunks(width)
            .map(<[usize]>::to_vec)
            .collect();
        let mut rng = Rng::new(seed ^ 0xD7A7_F10E);
        let mut phases = Vec::new();
        for pair in layers.windows(2) {
            let (from, to) = (&pair[0], &pair[1]);
            let mut phase = Vec::new();
            let size = |rng: &mut Rng| bytes * (1 + rng.below(4));
            // Every rank of `to` gets one message, from ranks of `from` in turn ...
            for (i, &d) in to.iter().enumerate() {
                let s = from[i % from.len()];
                phase.push(Message {
                    src: s,
                    dst: d,
                    bytes: size(&mut rng),
                });
            }
            // ... and every rank of `from` sends to two ranks of `to` at random.
            for &s in from {
                let mut sent: Vec<usize> =
                    phase.iter().filter(|m| m.src == s).map(|m| m.dst).collect();
                let want = 2.min(to.len());
                while sent.len() < want {
                    let d = to[rng.below(to.len() as u64) as usize];
                    if !sent.contains(&d) {
                        sent.push(d);
                        phase.push(Message {
                            src: s,
                            dst: d,
                            bytes: size(&mut rng),
                        });
                    }
                }
            }
            phases.push(phase);
        }
        Profile {
            name: "dataflow".into(),
            ranks,
            phases,
        }
        .checked()
    }

    /// One allreduce of `vector_bytes` per iteration on the golden engine's
    /// schedule (`threshold` = AR_THRESHOLD, bytes).
    pub fn allreduce(ranks: usize, vector_bytes: u64, threshold: u64) -> Result<Profile> {
        check_ranks(ranks)?;
        let n = vector_bytes.div_ceil(8).max(1) as usize;
        let algo = Algorithm::for_size(n * 8, threshold as usize);
        let mut by_step: BTreeMap<usize, Vec<Message>> = BTreeMap::new();
        for r in 0..ranks {
            for s in steps(ranks, r, n, algo) {
                if !s.send.is_empty() {
                    by_step.entry(s.index).or_default().push(Message {
                        src: r,
                        dst: s.partner,
                        bytes: 8 * s.send.len() as u64,
                    });
                }
            }
        }
        Profile {
            name: "allreduce".into(),
            ranks,
            phases: by_step.into_values().collect(),
        }
        .checked()
    }

    /// Read a profile file: `.json` as JSON, anything else as CSV. `shown`
    /// names the file in errors.
    pub fn parse(text: &str, shown: &str) -> Result<Profile> {
        if shown.ends_with(".json") {
            Profile::parse_json(text, shown)
        } else {
            Profile::parse_csv(text, shown)
        }
    }

    /// The CSV format (see the module doc).
    pub fn parse_csv(text: &str, shown: &str) -> Result<Profile> {
        let mut ranks: Option<usize> = None;
        let mut phases: Vec<Vec<Message>> = Vec::new();
        for (i, raw) in text.lines().enumerate() {
            let line = i + 1;
            let body = raw.split('#').next().unwrap_or("").trim();
            if body.is_empty() {
                continue;
            }
            let fields: Vec<&str> = body.split(',').map(str::trim).collect();
            let Some(n) = ranks else {
                if fields.len() != 2 || fields[0] != "ranks" {
                    bail!("{shown}:{line}: the first line must be `ranks,N`, found {body:?}");
                }
                let n = num(shown, line, "ranks", fields[1])?;
                check_ranks(n as usize)
                    .with_context(|| format!("{shown}:{line}: field `ranks`"))?;
                ranks = Some(n as usize);
                continue;
            };
            if fields == ["phase", "src", "dst", "bytes"] {
                continue;
            }
            if fields.len() != 4 {
                bail!(
                    "{shown}:{line}: expected 4 fields `phase,src,dst,bytes`, found {}",
                    fields.len()
                );
            }
            let phase = num(shown, line, "phase", fields[0])? as usize;
            let src = num(shown, line, "src", fields[1])? as usize;
            let dst = num(shown, line, "dst", fields[2])? as usize;
            let bytes = num(shown, line, "bytes", fields[3])?;
            let m = Message { src, dst, bytes };
            check_message(&m, n).map_err(|(field, why)| {
                anyhow::anyhow!("{shown}:{line}: field `{field}`: {why}")
            })?;
            let cur = phases.len();
            if phase + 1 == cur {
                phases[phase].push(m);
            } else if phase == cur {
                phases.push(vec![m]);
            } else {
                bail!(
                    "{shown}:{line}: field `phase`: {phase} out of order; phases run 0, 1, 2, ... \
                     in order without gaps (expected {} or {cur})",
                    cur.saturating_sub(1)
                );
            }
        }
        let Some(ranks) = ranks else {
            bail!("{shown}: empty profile: expected a first line `ranks,N`");
        };
        if phases.is_empty() {
            bail!("{shown}: no messages (lines `phase,src,dst,bytes`)");
        }
        Ok(Profile {
            name: shown.to_string(),
            ranks,
            phases,
        })
    }

    /// The JSON format (see the module doc).
    pub fn parse_json(text: &str, shown: &str) -> Result<Profile> {
        let mut p: Profile = serde_json::from_str(text).map_err(|e| {
            anyhow::anyhow!(
                "{shown}:{}:{}: {}",
                e.line(),
                e.column(),
                e.to_string().split(" at line").next().unwrap_or_default()
            )
        })?;
        if p.name.is_empty() {
            p.name = shown.to_string();
        }
        check_ranks(p.ranks).with_context(|| format!("{shown}: field `ranks`"))?;
        if p.phases.is_empty() {
            bail!("{shown}: field `phases`: no phases");
        }
        for (i, ph) in p.phases.iter().enumerate() {
            if ph.is_empty() {
                bail!("{shown}: field `phases[{i}]`: a phase needs at least one message");
            }
            for (j, m) in ph.iter().enumerate() {
                check_message(m, p.ranks).map_err(|(f, why)| {
                    anyhow::anyhow!("{shown}: field `phases[{i}][{j}].{f}`: {why}")
                })?;
            }
        }
        Ok(p)
    }

    fn checked(self) -> Result<Profile> {
        for ph in &self.phases {
            for m in ph {
                check_message(m, self.ranks).map_err(|(f, why)| {
                    anyhow::anyhow!("{} profile: message field `{f}`: {why}", self.name)
                })?;
            }
        }
        Ok(self)
    }

    /// Bytes per iteration between each unordered rank pair `(a < b)`, both directions summed.
    pub fn pair_bytes(&self) -> BTreeMap<(usize, usize), u64> {
        let mut out = BTreeMap::new();
        for m in self.phases.iter().flatten() {
            let key = (m.src.min(m.dst), m.src.max(m.dst));
            *out.entry(key).or_insert(0) += m.bytes;
        }
        out
    }

    /// Bytes one iteration moves.
    pub fn bytes_per_iteration(&self) -> u64 {
        self.phases.iter().flatten().map(|m| m.bytes).sum()
    }
}

fn check_ranks(n: usize) -> Result<()> {
    if (2..=MAX_RANKS).contains(&n) {
        Ok(())
    } else {
        bail!("{n} ranks: a job needs 2..={MAX_RANKS} ranks")
    }
}

/// The field that breaks a rule, and why.
fn check_message(m: &Message, ranks: usize) -> std::result::Result<(), (&'static str, String)> {
    if m.src >= ranks {
        return Err(("src", format!("{} is not below ranks = {ranks}", m.src)));
    }
    if m.dst >= ranks {
        return Err(("dst", format!("{} is not below ranks = {ranks}", m.dst)));
    }
    if m.src == m.dst {
        return Err(("dst", format!("{} sends to itself", m.src)));
    }
    if m.bytes == 0 {
        return Err(("bytes", "must be > 0".into()));
    }
    Ok(())
}

fn num(shown: &str, line: usize, field: &str, v: &str) -> Result<u64> {
    v.parse::<u64>().map_err(|_| {
        anyhow::anyhow!("{shown}:{line}: field `{field}`: {v:?} is not a non-negative integer")
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grid3_is_most_cubic() {
        assert_eq!(grid3(64), [4, 4, 4]);
        assert_eq!(grid3(32), [4, 4, 2]);
        assert_eq!(grid3(12), [3, 2, 2]);
        assert_eq!(grid3(7), [7, 1, 1]);
    }

    #[test]
    fn halo_sends_to_six_neighbours() {
        let p = Profile::halo3d(64, 1000).unwrap();
        assert_eq!(p.phases.len(), 3);
        for ph in &p.phases {
            assert_eq!(ph.len(), 128);
        }
        // rank 0 at (0,0,0): x neighbours 1 and 3, y 4 and 12, z 16 and 48.
        let dsts: Vec<usize> = p
            .phases
            .iter()
            .flatten()
            .filter(|m| m.src == 0)
            .map(|m| m.dst)
            .collect();
        assert_eq!(dsts, vec![1, 3, 4, 12, 16, 48]);
        assert_eq!(p.bytes_per_iteration(), 64 * 6 * 1000);
    }

    #[test]
    fn dataflow_reaches_every_rank_of_each_next_layer() {
        let p = Profile::dataflow(30, 100, 7).unwrap();
        // width 6: 5 layers, 4 boundaries
        assert_eq!(p.phases.len(), 4);
        for (l, ph) in p.phases.iter().enumerate() {
            for d in 6 * (l + 1)..(6 * (l + 2)).min(30) {
                assert!(
                    ph.iter().any(|m| m.dst == d),
                    "rank {d} gets nothing in phase {l}"
                );
            }
            for m in ph {
                assert!(m.src / 6 == l && m.dst / 6 == l + 1, "{m:?}");
                assert!((100..=400).contains(&m.bytes));
            }
        }
        assert_eq!(p, Profile::dataflow(30, 100, 7).unwrap());
        assert_ne!(p, Profile::dataflow(30, 100, 8).unwrap());
    }

    #[test]
    fn allreduce_follows_the_engine_schedule() {
        let p = Profile::allreduce(8, 64, 4096).unwrap();
        // recursive doubling: 3 steps, every rank sends the whole 64 B to r ^ 2^k
        assert_eq!(p.phases.len(), 3);
        for (k, ph) in p.phases.iter().enumerate() {
            assert_eq!(ph.len(), 8);
            for m in ph {
                assert_eq!(m.dst, m.src ^ (1 << k));
                assert_eq!(m.bytes, 64);
            }
        }
        // 6 ranks: pre step (2 extras), 2 doubling steps, post step
        let p = Profile::allreduce(6, 64, 4096).unwrap();
        assert_eq!(p.phases.len(), 4);
        assert_eq!(
            p.phases[0],
            vec![
                Message {
                    src: 4,
                    dst: 0,
                    bytes: 64
                },
                Message {
                    src: 5,
                    dst: 1,
                    bytes: 64
                },
            ]
        );
        // large vectors: reduce-scatter + allgather halves the bytes per step
        let p = Profile::allreduce(4, 1 << 16, 4096).unwrap();
        assert_eq!(p.phases.len(), 4);
        assert_eq!(p.phases[0][0].bytes, 1 << 15);
        assert_eq!(p.phases[1][0].bytes, 1 << 14);
    }

    #[test]
    fn csv_reads_and_errors_name_line_and_field() {
        let ok = "# test\nranks,3\nphase,src,dst,bytes\n0,0,1,10\n0,1,2,20 # x\n\n1,2,0,30\n";
        let p = Profile::parse(ok, "a.csv").unwrap();
        assert_eq!(p.ranks, 3);
        assert_eq!(p.phases.len(), 2);
        assert_eq!(
            p.phases[1],
            vec![Message {
                src: 2,
                dst: 0,
                bytes: 30
            }]
        );
        let err = |t: &str| format!("{:#}", Profile::parse(t, "a.csv").unwrap_err());
        assert_eq!(
            err("ranks,3\n0,0,3,10\n"),
            "a.csv:2: field `dst`: 3 is not below ranks = 3"
        );
        assert_eq!(
            err("ranks,3\n0,0,1,10\n0,1,1,10\n"),
            "a.csv:3: field `dst`: 1 sends to itself"
        );
        assert_eq!(
            err("ranks,3\n0,0,1,x\n"),
            "a.csv:2: field `bytes`: \"x\" is not a non-negative integer"
        );
        assert_eq!(
            err("ranks,3\n0,0,1,0\n"),
            "a.csv:2: field `bytes`: must be > 0"
        );
        assert!(err("ranks,3\n0,0,1,5\n2,0,1,5\n")
            .starts_with("a.csv:3: field `phase`: 2 out of order"));
        assert_eq!(
            err("ranks,3\n0,0,1\n"),
            "a.csv:2: expected 4 fields `phase,src,dst,bytes`, found 3"
        );
        assert!(err("0,0,1,5\n").starts_with("a.csv:1: the first line must be `ranks,N`"));
        assert!(err("ranks,1\n0,0,1,5\n").starts_with("a.csv:1: field `ranks`: 1 ranks"));
        assert_eq!(
            err("ranks,4\n"),
            "a.csv: no messages (lines `phase,src,dst,bytes`)"
        );
    }

    #[test]
    fn json_reads_and_errors_name_line_and_field() {
        let ok = r#"{"ranks": 2, "phases": [[{"src": 0, "dst": 1, "bytes": 8}]]}"#;
        let p = Profile::parse(ok, "p.json").unwrap();
        assert_eq!(
            p.phases,
            vec![vec![Message {
                src: 0,
                dst: 1,
                bytes: 8
            }]]
        );
        let err = |t: &str| format!("{:#}", Profile::parse(t, "p.json").unwrap_err());
        let e = err("{\"ranks\": 2,\n \"phases\": [[{\"src\": 0, \"dst\": \"1\", \"bytes\": 8}]]}");
        assert!(e.starts_with("p.json:2:"), "{e}");
        assert!(e.contains("invalid type"), "{e}");
        let e = err("{\"ranks\": 2,\n \"phases\": [[{\"src\": 0, \"dest\": 1, \"bytes\": 8}]]}");
        assert!(
            e.starts_with("p.json:2:") && e.contains("unknown field `dest`"),
            "{e}"
        );
        assert_eq!(
            err(
                r#"{"ranks": 2, "phases": [[{"src": 0, "dst": 1, "bytes": 8}, {"src": 0, "dst": 2, "bytes": 8}]]}"#
            ),
            "p.json: field `phases[0][1].dst`: 2 is not below ranks = 2"
        );
        assert_eq!(
            err(r#"{"ranks": 2, "phases": [[]]}"#),
            "p.json: field `phases[0]`: a phase needs at least one message"
        );
    }
}
