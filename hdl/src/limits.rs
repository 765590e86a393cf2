//! The one table of hardware limits: every config key whose legal values
//! the RTL bounds, with what the RTL takes, what the network simulator
//! takes (it may allow more, e.g. dimensions up to 32) and why.
//!
//! Elaboration (`exanet_gen::params`) consults it once per key for its
//! target; the co-simulation benches check their parameter points against
//! it, and the emitters re-check the same rows (a bug guard: nothing that
//! elaboration let through fails there). Rules between keys (a buffer must
//! hold a whole packet, the response VC must be a class-1 VC) stay with
//! elaboration, which names both keys.
//!
//! | key | hardware | simulation | why |
//! |---|---|---|---|
//! | `topology.dims[i]` | 1..=16 | 1..=32 | 4-bit coordinates in the packet header (5-bit in the simulator) |
//! | `topology.local_ports` | 1..=4 | 1..=4 | router ports: 6 network + up to 4 local |
//! | `packet.flit_bits` | 64, 128, 256 | same | datapath widths with a compiled router instance |
//! | `packet.max_payload_bytes` | 8..=256, multiple of 8 | same | payloads are whole 64-bit words, at most 256 bytes |
//! | `router.classes` | 1..=2 | same | one priority bit |
//! | `router.vcs_per_class` | 1..=8 | same | 4-bit VC field (2 classes × 8) |
//! | `router.buffer_flits` | 9..=256 | 3..=1024 | VC buffers of 16..256 slots (4..8 address bits) in the RTL |
//! | `router.alloc_iterations` | 1..=4 | same | iSLIP iterations unrolled in one cycle |
//! | `ni.tx_ahead` | power of two, 2..=32 | same (RTL only) | transmit read-ahead queues |
//! | `ni.ar_communicators` | 0..=16 | same | allreduce communicator slots (4-bit id in a fragment's footer) |
//! | `ni.ar_queue_depth` | 1..=64 | same | the allreduce engine's descriptor queue |
//! | `ni.trace_depth` | 0 or a power of two, 8..=4096 | same | the event trace ring: four banks of distributed RAM, at least two entries each |
//! | `link.frame_flits` | 0..=63 (0 = derived) | same | 6-bit tail slots in a frame trailer |
//! | `link.burst_bits` | 1..=64 | same | a burst hits the 64 payload bits of one code word |

use crate::ni::rdma_tx::TX_AHEAD_RANGE;
use crate::router::top::SUPPORTED_BUFFER_ADDRESS_BITS;
use exanet_sim::router::params::{MAX_ALLOC_ITERATIONS, MAX_BUFFER_FLITS, MAX_VCS_PER_CLASS};
use exanet_sim::topology::{MAX_DIM, MAX_HW_DIM, MAX_LOCAL_PORTS};
use std::fmt;

/// What an elaboration is for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Target {
    /// RTL generation, lint, synthesis, co-simulation.
    Hardware,
    /// The network simulator (`exanet simulate`, `exanet sweep`).
    Simulation,
}

/// The legal values of one key.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Allowed {
    /// `lo..=hi`.
    Range(u64, u64),
    /// `lo..=hi` and a multiple of `step`.
    Multiple(u64, u64, u64),
    /// A power of two in `lo..=hi`.
    PowerOfTwo(u64, u64),
    /// One of these.
    OneOf(&'static [u64]),
}

impl Allowed {
    /// Is `v` legal?
    pub fn admits(&self, v: u64) -> bool {
        match *self {
            Allowed::Range(lo, hi) => (lo..=hi).contains(&v),
            Allowed::Multiple(lo, hi, step) => (lo..=hi).contains(&v) && v.is_multiple_of(step),
            Allowed::PowerOfTwo(lo, hi) => (lo..=hi).contains(&v) && v.is_power_of_two(),
            Allowed::OneOf(set) => set.contains(&v),
        }
    }

    /// The smallest and largest legal values.
    pub fn edges(&self) -> (u64, u64) {
        match *self {
            Allowed::Range(lo, hi) | Allowed::Multiple(lo, hi, _) | Allowed::PowerOfTwo(lo, hi) => {
                (lo, hi)
            }
            Allowed::OneOf(set) => (
                set.iter().copied().min().unwrap_or(0),
                set.iter().copied().max().unwrap_or(0),
            ),
        }
    }
}

impl fmt::Display for Allowed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Allowed::Range(lo, hi) => write!(f, "{lo}..={hi}"),
            Allowed::Multiple(lo, hi, step) => write!(f, "{lo}..={hi} and a multiple of {step}"),
            Allowed::PowerOfTwo(lo, hi) => write!(f, "a power of two in {lo}..={hi}"),
            Allowed::OneOf(set) => {
                let s: Vec<String> = set.iter().map(|v| v.to_string()).collect();
                write!(f, "one of {}", s.join(", "))
            }
        }
    }
}

/// One row of the table.
#[derive(Clone, Copy, Debug)]
pub struct Limit {
    /// The config key (`topology.dims` stands for each `topology.dims[i]`).
    pub key: &'static str,
    /// What the RTL takes.
    pub hardware: Allowed,
    /// What the network simulator takes.
    pub simulation: Allowed,
    /// Why, in words.
    pub why: &'static str,
}

const FLIT_WIDTHS: &[u64] = &[64, 128, 256];

/// The table (see the module doc for it in words).
pub const LIMITS: &[Limit] = &[
    Limit {
        key: "topology.dims",
        hardware: Allowed::Range(1, MAX_HW_DIM as u64),
        simulation: Allowed::Range(1, MAX_DIM as u64),
        why: "4-bit coordinates in the packet header; the simulator widens them to 5 bits",
    },
    Limit {
        key: "topology.local_ports",
        hardware: Allowed::Range(1, MAX_LOCAL_PORTS as u64),
        simulation: Allowed::Range(1, MAX_LOCAL_PORTS as u64),
        why: "a router has 6 network ports and up to 4 local ports",
    },
    Limit {
        key: "packet.flit_bits",
        hardware: Allowed::OneOf(FLIT_WIDTHS),
        simulation: Allowed::OneOf(FLIT_WIDTHS),
        why: "the datapath widths the router is built for",
    },
    Limit {
        key: "packet.max_payload_bytes",
        hardware: Allowed::Multiple(8, 256, 8),
        simulation: Allowed::Multiple(8, 256, 8),
        why: "payloads are whole 64-bit words, at most 256 bytes",
    },
    Limit {
        key: "router.classes",
        hardware: Allowed::Range(1, 2),
        simulation: Allowed::Range(1, 2),
        why: "one priority bit in the header",
    },
    Limit {
        key: "router.vcs_per_class",
        hardware: Allowed::Range(1, MAX_VCS_PER_CLASS as u64),
        simulation: Allowed::Range(1, MAX_VCS_PER_CLASS as u64),
        why: "the 4-bit VC field holds 2 classes of up to 8 VCs",
    },
    Limit {
        key: "router.buffer_flits",
        hardware: Allowed::Range(
            (1 << (*SUPPORTED_BUFFER_ADDRESS_BITS.start() - 1)) + 1,
            1 << *SUPPORTED_BUFFER_ADDRESS_BITS.end(),
        ),
        // 3: the smallest largest packet (header, one payload flit, footer);
        // elaboration also asks for one whole largest packet of the config.
        simulation: Allowed::Range(3, MAX_BUFFER_FLITS as u64),
        why: "the RTL's VC buffers have 16, 32, 64, 128 or 256 slots",
    },
    Limit {
        key: "router.alloc_iterations",
        hardware: Allowed::Range(1, MAX_ALLOC_ITERATIONS as u64),
        simulation: Allowed::Range(1, MAX_ALLOC_ITERATIONS as u64),
        why: "iSLIP iterations unrolled in one cycle",
    },
    Limit {
        key: "link.frame_flits",
        hardware: Allowed::Range(0, exanet_sim::link::MAX_FRAME_FLITS as u64),
        simulation: Allowed::Range(0, exanet_sim::link::MAX_FRAME_FLITS as u64),
        why: "a trailer's 6-bit tail slots index the flits of a frame (0 = derived from the flit width)",
    },
    Limit {
        key: "link.burst_bits",
        hardware: Allowed::Range(1, 64),
        simulation: Allowed::Range(1, 64),
        why: "the PHY model's error burst hits the 64 payload bits of one 66-bit code word",
    },
    Limit {
        key: "ni.tx_ahead",
        hardware: Allowed::PowerOfTwo(*TX_AHEAD_RANGE.start() as u64, *TX_AHEAD_RANGE.end() as u64),
        simulation: Allowed::PowerOfTwo(
            *TX_AHEAD_RANGE.start() as u64,
            *TX_AHEAD_RANGE.end() as u64,
        ),
        why: "packets the NI's transmit scheduler may pick ahead of sending; RTL only",
    },
    Limit {
        key: "ni.ar_communicators",
        hardware: Allowed::Range(0, 16),
        simulation: Allowed::Range(0, 16),
        why: "allreduce communicator slots: a 4-bit communicator id in a fragment's footer",
    },
    Limit {
        key: "ni.ar_queue_depth",
        hardware: Allowed::Range(1, 64),
        simulation: Allowed::Range(1, 64),
        why: "the allreduce engine's descriptor queue",
    },
    Limit {
        key: "ni.trace_depth",
        hardware: Allowed::OneOf(&TRACE_DEPTHS),
        simulation: Allowed::OneOf(&TRACE_DEPTHS),
        why: "the NI's event trace ring: 0 (none) or a power of two, four banks of distributed RAM of at least two entries each",
    },
];

/// `ni.trace_depth` values: 0 (no trace) and the powers of two 8..=4096.
const TRACE_DEPTHS: [u64; 11] = [0, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096];

/// The row of `key` (`topology.dims[2]` finds `topology.dims`).
pub fn limit(key: &str) -> Option<&'static Limit> {
    let base = key.split('[').next().unwrap_or(key);
    LIMITS.iter().find(|l| l.key == base)
}

/// A config value that breaks a rule: names the key, the value and the
/// rule. The one error type of every config rule (this table's, and the
/// rules between keys that elaboration checks).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RuleError {
    /// Key path, e.g. `router.vcs_per_class` or `topology.dims[2]`.
    pub key: String,
    /// The offending value, as TOML text.
    pub value: String,
    /// The rule, in words.
    pub rule: String,
}

impl fmt::Display for RuleError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} = {}: {}", self.key, self.value, self.rule)
    }
}

impl std::error::Error for RuleError {}

/// What [`check`] found for a legal value.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// Legal for the target and for hardware.
    Ok,
    /// Legal for the simulator only: the note says where the RTL stops.
    SimulationOnly(String),
}

/// The words that mark a [`Verdict::SimulationOnly`] note.
const SIMULATION_ONLY: &str = "simulated, but the RTL takes";

/// Is `note` a [`Verdict::SimulationOnly`] note (so a simulation report
/// should repeat it)?
pub fn is_simulation_only(note: &str) -> bool {
    note.contains(SIMULATION_ONLY)
}

/// Check `value` of `key` (a row of [`LIMITS`]; a key without a row is
/// unbounded here) for `target`.
pub fn check(key: &str, value: u64, target: Target) -> Result<Verdict, RuleError> {
    let Some(l) = limit(key) else {
        return Ok(Verdict::Ok);
    };
    let (allowed, other) = match target {
        Target::Hardware => (l.hardware, l.simulation),
        Target::Simulation => (l.simulation, l.hardware),
    };
    if !allowed.admits(value) {
        let rule = match target {
            Target::Hardware if other != allowed && other.admits(value) => format!(
                "must be {allowed} for hardware ({}); only the simulator (`exanet simulate`, \
                 `exanet sweep`) takes {other}",
                l.why
            ),
            Target::Hardware => format!("must be {allowed} ({})", l.why),
            Target::Simulation if other != allowed => format!(
                "must be {allowed} in simulation ({other} for hardware: {})",
                l.why
            ),
            Target::Simulation => format!("must be {allowed} ({})", l.why),
        };
        return Err(RuleError {
            key: key.to_string(),
            value: value.to_string(),
            rule,
        });
    }
    if target == Target::Simulation && !l.hardware.admits(value) {
        return Ok(Verdict::SimulationOnly(format!(
            "{key} = {value}: {SIMULATION_ONLY} {} ({})",
            l.hardware, l.why
        )));
    }
    Ok(Verdict::Ok)
}

/// [`check`] for hardware, as an `anyhow` error.
pub fn check_hardware(key: &str, value: u64) -> anyhow::Result<()> {
    check(key, value, Target::Hardware)
        .map(|_| ())
        .map_err(anyhow::Error::new)
}

/// Every row-bound field of a router's parameters, for hardware.
pub fn check_router(p: &exanet_sim::router::RouterParams) -> anyhow::Result<()> {
    for (i, &d) in p.topology.dims.iter().enumerate() {
        check_hardware(&format!("topology.dims[{i}]"), d as u64)?;
    }
    check_hardware("topology.local_ports", p.topology.local_ports as u64)?;
    check_hardware("packet.flit_bits", p.flit_bits as u64)?;
    check_hardware("router.classes", p.classes as u64)?;
    check_hardware("router.vcs_per_class", p.vcs_per_class as u64)?;
    check_hardware("router.buffer_flits", p.buffer_flits as u64)?;
    check_hardware("router.alloc_iterations", p.alloc_iterations as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_row_admits_its_edges_and_refuses_one_past_them() {
        for l in LIMITS {
            for (allowed, target) in [
                (l.hardware, Target::Hardware),
                (l.simulation, Target::Simulation),
            ] {
                let (lo, hi) = allowed.edges();
                assert!(check(l.key, lo, target).is_ok(), "{} = {lo}", l.key);
                assert!(check(l.key, hi, target).is_ok(), "{} = {hi}", l.key);
                assert!(
                    check(l.key, hi + 1, target).is_err(),
                    "{} = {}",
                    l.key,
                    hi + 1
                );
                if lo > 0 {
                    assert!(
                        check(l.key, lo - 1, target).is_err(),
                        "{} = {}",
                        l.key,
                        lo - 1
                    );
                }
            }
        }
    }

    #[test]
    fn messages_name_the_key_the_value_and_both_targets() {
        let e = check("router.buffer_flits", 257, Target::Hardware).unwrap_err();
        assert_eq!(
            e.to_string(),
            "router.buffer_flits = 257: must be 9..=256 for hardware (the RTL's VC buffers have \
             16, 32, 64, 128 or 256 slots); only the simulator (`exanet simulate`, `exanet \
             sweep`) takes 3..=1024"
        );
        assert_eq!(
            check("router.buffer_flits", 257, Target::Simulation).unwrap(),
            Verdict::SimulationOnly(
                "router.buffer_flits = 257: simulated, but the RTL takes 9..=256 (the RTL's VC \
                 buffers have 16, 32, 64, 128 or 256 slots)"
                    .into()
            )
        );
        let e = check("topology.dims[1]", 33, Target::Simulation).unwrap_err();
        assert!(
            e.to_string().starts_with(
                "topology.dims[1] = 33: must be 1..=32 in simulation (1..=16 for hardware"
            ),
            "{e}"
        );
        let e = check("ni.tx_ahead", 12, Target::Hardware).unwrap_err();
        assert!(e.to_string().contains("a power of two in 2..=32"), "{e}");
    }

    #[test]
    fn the_router_rtl_takes_exactly_the_buffer_rows_range() {
        // The row is derived from the RTL's compiled buffer sizes.
        let (lo, hi) = limit("router.buffer_flits").unwrap().hardware.edges();
        assert_eq!((lo, hi), (9, 256));
        assert_eq!(
            crate::router::top::buffer_address_bits(lo as usize),
            *SUPPORTED_BUFFER_ADDRESS_BITS.start()
        );
        assert_eq!(
            crate::router::top::buffer_address_bits(hi as usize),
            *SUPPORTED_BUFFER_ADDRESS_BITS.end()
        );
        assert!(
            crate::router::top::buffer_address_bits(lo as usize - 1)
                < *SUPPORTED_BUFFER_ADDRESS_BITS.start()
        );
    }
}
