//! Traffic for the network simulator: destination patterns, packet sizes and
//! trace replay.
//!
//! Terminals (network interfaces) are numbered `node * local_ports + l`, with
//! node indices as in [`crate::topology`]. Bit patterns act on the bits of
//! the terminal index and need a power-of-two terminal count; coordinate
//! patterns act on the router coordinates and keep the local index `l`.
//!
//! | pattern | destination of terminal s (n index bits, k_i ring sizes) |
//! |---|---|
//! | `uniform` | uniformly random among all other terminals |
//! | `transpose` | index bits rotated left by n/2 (for even n: the two halves swapped) |
//! | `bit_complement` | `!s` on n bits |
//! | `bit_reverse` | the n bits of s reversed |
//! | `tornado` | each coordinate `c_i + ceil(k_i/2) - 1 (mod k_i)` |
//! | `neighbour` | a uniformly random direct neighbour router (one hop away) |
//! | `hotspot` | with probability `fraction` a uniformly random hotspot node, else uniform |
//!
//! A trace is CSV with lines `cycle,source,destination,bytes` (terminal
//! indices; an optional header line; `#` comments). A message longer than the
//! maximum payload is split into maximum-size packets.

use crate::rng::Rng;
use crate::topology::Topology;
use anyhow::{bail, Context, Result};
use serde::{Deserialize, Serialize};

/// Destination pattern of synthetic traffic.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum Pattern {
    Uniform,
    Transpose,
    BitComplement,
    BitReverse,
    Tornado,
    Neighbour,
    Hotspot {
        /// Fraction of packets sent to the hotspots, 0..=1.
        fraction: f64,
        /// Hotspot node indices (each terminal of such a node is a hotspot).
        nodes: Vec<usize>,
    },
}

/// Payload size distribution in bytes.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum PacketSizes {
    Fixed {
        bytes: usize,
    },
    /// `small` bytes, or `large` bytes with probability `large_fraction`.
    Bimodal {
        small: usize,
        large: usize,
        large_fraction: f64,
    },
}

impl Default for PacketSizes {
    fn default() -> Self {
        PacketSizes::Fixed { bytes: 256 }
    }
}

impl PacketSizes {
    /// Check against the largest payload.
    pub fn validate(&self, max_payload: usize) -> Result<()> {
        let (lo, hi, f) = match *self {
            PacketSizes::Fixed { bytes } => (bytes, bytes, 0.0),
            PacketSizes::Bimodal {
                small,
                large,
                large_fraction,
            } => (small, large, large_fraction),
        };
        if lo.max(hi) > max_payload {
            bail!(
                "traffic.sizes = {self:?}: payload sizes must be <= {max_payload} bytes (the maximum packet)"
            );
        }
        if !(0.0..=1.0).contains(&f) {
            bail!("traffic.sizes.large_fraction = {f}: must be 0..=1");
        }
        Ok(())
    }

    /// Draw a payload size.
    pub fn draw(&self, rng: &mut Rng) -> usize {
        match *self {
            PacketSizes::Fixed { bytes } => bytes,
            PacketSizes::Bimodal {
                small,
                large,
                large_fraction,
            } => {
                if rng.chance(large_fraction) {
                    large
                } else {
                    small
                }
            }
        }
    }

    /// Mean flits per packet, given `flits(bytes)`.
    pub fn mean_flits(&self, flits: impl Fn(usize) -> usize) -> f64 {
        match *self {
            PacketSizes::Fixed { bytes } => flits(bytes) as f64,
            PacketSizes::Bimodal {
                small,
                large,
                large_fraction,
            } => {
                (1.0 - large_fraction) * flits(small) as f64 + large_fraction * flits(large) as f64
            }
        }
    }
}

/// A destination generator for one topology.
#[derive(Clone, Debug)]
pub struct Destinations {
    pattern: Pattern,
    topo: Topology,
    terminals: usize,
    bits: u32,
}

impl Destinations {
    /// Validate `pattern` for `topo`.
    pub fn new(pattern: &Pattern, topo: &Topology) -> Result<Self> {
        let terminals = topo.num_nodes() * topo.local_ports;
        let bits = terminals.trailing_zeros();
        match pattern {
            Pattern::Transpose | Pattern::BitComplement | Pattern::BitReverse
                if !terminals.is_power_of_two() =>
            {
                bail!(
                    "traffic.pattern = {pattern:?}: needs a power-of-two number of terminals, this network has {terminals}"
                )
            }
            Pattern::Uniform if terminals < 2 => {
                bail!("traffic.pattern = uniform: needs >= 2 terminals")
            }
            Pattern::Hotspot { fraction, nodes } => {
                if !(0.0..=1.0).contains(fraction) {
                    bail!("traffic.pattern.fraction = {fraction}: must be 0..=1");
                }
                if nodes.is_empty() || nodes.iter().any(|&n| n >= topo.num_nodes()) {
                    bail!(
                        "traffic.pattern.nodes = {nodes:?}: must be a non-empty list of node indices below {}",
                        topo.num_nodes()
                    );
                }
            }
            _ => {}
        }
        Ok(Destinations {
            pattern: pattern.clone(),
            topo: topo.clone(),
            terminals,
            bits,
        })
    }

    /// Number of terminals.
    pub fn terminals(&self) -> usize {
        self.terminals
    }

    fn uniform(&self, src: usize, rng: &mut Rng) -> usize {
        let d = rng.below(self.terminals as u64 - 1) as usize;
        if d >= src {
            d + 1
        } else {
            d
        }
    }

    fn map_coords(&self, src: usize, f: impl Fn(usize, usize, usize) -> usize) -> usize {
        let l = self.topo.local_ports;
        let c = self.topo.coords(src / l);
        let mut d = c;
        for i in 0..3 {
            d[i] = f(i, c[i], self.topo.dims[i]);
        }
        self.topo.node_at(d) * l + src % l
    }

    /// Destination terminal of a packet from terminal `src`.
    pub fn dest(&self, src: usize, rng: &mut Rng) -> usize {
        let n = self.bits;
        let mask = if n == 0 { 0 } else { (1usize << n) - 1 };
        match &self.pattern {
            Pattern::Uniform => self.uniform(src, rng),
            Pattern::Transpose => {
                let r = n / 2;
                if r == 0 {
                    src
                } else {
                    ((src << r) | (src >> (n - r))) & mask
                }
            }
            Pattern::BitComplement => !src & mask,
            Pattern::BitReverse => {
                if n == 0 {
                    src
                } else {
                    src.reverse_bits() >> (usize::BITS - n)
                }
            }
            Pattern::Tornado => self.map_coords(src, |_, c, k| (c + k.div_ceil(2) + k - 1) % k),
            Pattern::Neighbour => {
                let dirs = self.topo.num_dir_ports();
                let node = src / self.topo.local_ports;
                let options: [Option<(usize, usize)>; 6] = std::array::from_fn(|p| {
                    if p < dirs {
                        self.topo.neighbour(node, p)
                    } else {
                        None
                    }
                });
                let count = options.iter().flatten().count();
                if count == 0 {
                    return src;
                }
                let k = rng.below(count as u64) as usize;
                let (m, _) = options.iter().flatten().nth(k).copied().unwrap();
                m * self.topo.local_ports + src % self.topo.local_ports
            }
            Pattern::Hotspot { fraction, nodes } => {
                if rng.chance(*fraction) {
                    let node = nodes[rng.below(nodes.len() as u64) as usize];
                    node * self.topo.local_ports + rng.below(self.topo.local_ports as u64) as usize
                } else {
                    self.uniform(src, rng)
                }
            }
        }
    }
}

/// One message of a trace.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TraceEvent {
    pub cycle: u64,
    pub src: usize,
    pub dst: usize,
    pub bytes: usize,
}

/// Parse a trace (see the module doc), checking terminals are below `terminals`;
/// events are returned sorted by cycle (stable).
pub fn parse_trace(text: &str, terminals: usize, what: &str) -> Result<Vec<TraceEvent>> {
    let mut v = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let f: Vec<&str> = line.split(',').map(str::trim).collect();
        if v.is_empty() && f.first().is_some_and(|x| x.parse::<u64>().is_err()) {
            continue; // header line
        }
        let ctx = || {
            format!(
                "{what}:{}: {line:?}: expected cycle,source,destination,bytes",
                i + 1
            )
        };
        if f.len() != 4 {
            bail!("{}", ctx());
        }
        let ev = TraceEvent {
            cycle: f[0].parse().with_context(ctx)?,
            src: f[1].parse().with_context(ctx)?,
            dst: f[2].parse().with_context(ctx)?,
            bytes: f[3].parse().with_context(ctx)?,
        };
        if ev.src >= terminals || ev.dst >= terminals {
            bail!(
                "{}: terminal out of range (this network has {terminals})",
                ctx()
            );
        }
        v.push(ev);
    }
    v.sort_by_key(|e| e.cycle);
    Ok(v)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn topo(d: [usize; 3]) -> Topology {
        Topology::new(d, [true; 3], 1).unwrap()
    }

    #[test]
    fn permutations_are_permutations() {
        let t = topo([4, 4, 4]);
        let mut rng = Rng::new(1);
        for p in [
            Pattern::Transpose,
            Pattern::BitComplement,
            Pattern::BitReverse,
            Pattern::Tornado,
        ] {
            let d = Destinations::new(&p, &t).unwrap();
            let mut seen = [false; 64];
            for s in 0..64 {
                let x = d.dest(s, &mut rng);
                assert!(!seen[x], "{p:?} maps twice to {x}");
                seen[x] = true;
            }
        }
        let d = Destinations::new(&Pattern::BitComplement, &t).unwrap();
        assert_eq!(d.dest(0b000101, &mut rng), 0b111010);
        let d = Destinations::new(&Pattern::BitReverse, &t).unwrap();
        assert_eq!(d.dest(0b000101, &mut rng), 0b101000);
        let d = Destinations::new(&Pattern::Transpose, &t).unwrap();
        assert_eq!(d.dest(0b000101, &mut rng), 0b101000);
        // tornado on a ring of 8: + 3
        let t8 = topo([8, 1, 1]);
        let d = Destinations::new(&Pattern::Tornado, &t8).unwrap();
        assert_eq!(d.dest(6, &mut rng), 1);
    }

    #[test]
    fn random_patterns_stay_in_range() {
        let t = topo([4, 2, 3]);
        let mut rng = Rng::new(2);
        assert!(Destinations::new(&Pattern::BitReverse, &t).is_err());
        let u = Destinations::new(&Pattern::Uniform, &t).unwrap();
        let n = Destinations::new(&Pattern::Neighbour, &t).unwrap();
        let h = Destinations::new(
            &Pattern::Hotspot {
                fraction: 0.5,
                nodes: vec![5],
            },
            &t,
        )
        .unwrap();
        let mut hot = 0;
        for i in 0..10_000 {
            let s = i % 24;
            let a = u.dest(s, &mut rng);
            assert!(a < 24 && a != s);
            let b = n.dest(s, &mut rng);
            assert_eq!(t.hops(s, b), 1);
            hot += usize::from(h.dest(s, &mut rng) == 5);
        }
        assert!((5_000..5_700).contains(&hot), "{hot}");
        assert!(Destinations::new(
            &Pattern::Hotspot {
                fraction: 0.5,
                nodes: vec![24]
            },
            &t
        )
        .is_err());
    }

    #[test]
    fn trace_parsing() {
        let ev = parse_trace(
            "cycle,src,dst,bytes\n# c\n5, 1, 2, 300\n3,0,1,8\n",
            4,
            "t.csv",
        )
        .unwrap();
        assert_eq!(
            ev[0],
            TraceEvent {
                cycle: 3,
                src: 0,
                dst: 1,
                bytes: 8
            }
        );
        assert_eq!(ev[1].bytes, 300);
        let e = parse_trace("1,0,9,8\n", 4, "t.csv")
            .unwrap_err()
            .to_string();
        assert!(e.contains("t.csv:1"), "{e}");
        assert!(parse_trace("1,0,x,8\n", 4, "t.csv").is_err());
    }

    #[test]
    fn sizes() {
        let s = PacketSizes::Bimodal {
            small: 16,
            large: 256,
            large_fraction: 0.25,
        };
        s.validate(256).unwrap();
        assert!(s.validate(128).is_err());
        let m = s.mean_flits(|b| 2 + b.div_ceil(16));
        assert!((m - (0.75 * 3.0 + 0.25 * 18.0)).abs() < 1e-9);
    }
}
