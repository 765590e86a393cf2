//! Co-simulation bench of `arbiter`: RTL vs `exanet_sim::common::arbiter`.
//!
//! Stimulus comes in phases of random length with their own request
//! density (sparse to all-requesting), accept probability and request
//! style: independent random requests every cycle, or persistent
//! requesters that hold their request until granted and accepted (as a
//! router input VC does). Rare reset pulses. Every output is compared every
//! cycle, and a fairness scoreboard checks the RTL directly: a requester
//! that keeps requesting sees at most `n - 1` accepted grants of others.

use super::BlockInfo;
use crate::cosim::{Bench, Mismatch};
use crate::verilator::{Port, Sim};
use anyhow::Result;
use exanet_hdl::common::arbiter::emit_arbiter;
use exanet_hdl::emit::Emitted;
use exanet_sim::common::arbiter::{Arbiter, ArbiterInputs, ArbiterParams};
use exanet_sim::point;
use exanet_sim::rng::Rng;

/// Registry entry for `exanet cosim arbiter`.
pub fn info() -> BlockInfo {
    BlockInfo {
        name: "arbiter",
        about: "round-robin arbiter (one-hot grant, index, accept advances priority)",
        matrix,
        point,
    }
}

/// Default matrix: the smallest, odd sizes, the router's 7 and 11 ports, 16.
fn matrix() -> Vec<Box<dyn Bench>> {
    [2, 3, 5, 7, 8, 11, 16]
        .into_iter()
        .map(|n| {
            Box::new(ArbiterBench::new(ArbiterParams { n }).expect("matrix point is valid"))
                as Box<dyn Bench>
        })
        .collect()
}

/// Parse `n=..` (default 4).
fn point(text: &str) -> Result<Box<dyn Bench>> {
    Ok(Box::new(ArbiterBench::new(point::parse(text)?)?))
}

/// What a run exercised; the integration test asserts on it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ArbiterCoverage {
    /// Accepted grants per requester.
    pub accepted: [u64; 16],
    /// Longest wait (accepted grants of others) of a continuous requester.
    pub max_wait: u32,
    /// Cycles with every requester requesting.
    pub all_requesting: u64,
    /// Cycles with no request.
    pub idle: u64,
    /// Reset pulses.
    pub resets: u64,
}

#[derive(Clone)]
struct Ports {
    reset: Port,
    req: Port,
    accept: Port,
    grant: Port,
    grant_valid: Port,
    grant_index: Port,
}

/// The `arbiter` bench at one parameter point.
pub struct ArbiterBench {
    params: ArbiterParams,
    golden: Arbiter,
    /// Test-only fault: the golden model never sees `accept`.
    golden_ignores_accept: bool,
    /// Compare nothing with the golden model; only the fairness scoreboard.
    scoreboard_only: bool,
    /// The RTL's grant this cycle (persistent requesters drop on it).
    rtl_grant: u32,
    ports: Option<Ports>,
    inputs: ArbiterInputs,
    all: u32,
    held: u32,
    wait: [u32; 16],
    phase_left: u64,
    density: f64,
    p_accept: f64,
    persistent: bool,
    cov: ArbiterCoverage,
}

impl ArbiterBench {
    /// A bench of `params` (validated).
    pub fn new(params: ArbiterParams) -> Result<Self> {
        let golden = Arbiter::new(&params)?;
        Ok(ArbiterBench {
            all: (1u32 << params.n) - 1,
            params,
            golden,
            golden_ignores_accept: false,
            scoreboard_only: false,
            rtl_grant: 0,
            ports: None,
            inputs: ArbiterInputs::default(),
            held: 0,
            wait: [0; 16],
            phase_left: 0,
            density: 0.5,
            p_accept: 0.5,
            persistent: false,
            cov: ArbiterCoverage::default(),
        })
    }

    /// A bench whose golden model is broken on purpose: it never sees
    /// `accept`, so it is a fixed-priority arbiter. Only for showing that
    /// the bench catches a wrong model.
    pub fn with_fixed_priority_golden(params: ArbiterParams) -> Result<Self> {
        let mut b = Self::new(params)?;
        b.golden_ignores_accept = true;
        Ok(b)
    }

    /// Check only the protocol (one-hot grant of a requester, `grant_valid`
    /// = any request, index matching the grant) and the fairness bound, not
    /// the exact choice: for an alternative arbiter implementation loaded
    /// as external RTL, whose tie-breaking may differ from the model's.
    pub fn scoreboard_only(mut self) -> Self {
        self.scoreboard_only = true;
        self
    }

    /// What the run since the last [`Bench::reset`] exercised.
    pub fn coverage(&self) -> ArbiterCoverage {
        self.cov
    }

    fn golden_inputs(&self) -> ArbiterInputs {
        ArbiterInputs {
            accept: self.inputs.accept && !self.golden_ignores_accept,
            ..self.inputs
        }
    }

    fn new_phase(&mut self, rng: &mut Rng) {
        const DENSITY: [f64; 5] = [0.05, 0.2, 0.5, 0.8, 1.0];
        const ACCEPT: [f64; 4] = [0.2, 0.6, 0.9, 1.0];
        self.density = DENSITY[rng.below(DENSITY.len() as u64) as usize];
        self.p_accept = ACCEPT[rng.below(ACCEPT.len() as u64) as usize];
        self.persistent = rng.chance(0.5);
        self.phase_left = 1 + rng.below(20 * self.params.n as u64 + 32);
    }
}

impl Bench for ArbiterBench {
    fn block(&self) -> &str {
        "arbiter"
    }

    fn point(&self) -> String {
        point::to_text(&self.params)
    }

    fn emit(&self) -> Result<Emitted> {
        emit_arbiter(&self.params)
    }

    fn bind(&mut self, sim: &Sim) -> Result<()> {
        let n = self.params.n;
        self.ports = Some(Ports {
            reset: sim.port_w("reset", 1)?,
            req: sim.port_w("req", n)?,
            accept: sim.port_w("accept", 1)?,
            grant: sim.port_w("grant", n)?,
            grant_valid: sim.port_w("grant_valid", 1)?,
            grant_index: sim.port_w("grant_index", self.params.index_bits())?,
        });
        Ok(())
    }

    fn reset(&mut self) {
        self.golden.power_on();
        self.inputs = ArbiterInputs::default();
        self.held = 0;
        self.rtl_grant = 0;
        self.wait = [0; 16];
        self.phase_left = 0;
        self.cov = ArbiterCoverage::default();
    }

    #[inline]
    fn drive(&mut self, rng: &mut Rng, _cycle: u64) {
        if self.phase_left == 0 {
            self.new_phase(rng);
        }
        self.phase_left -= 1;
        let mut fresh = 0u32;
        if self.density >= 1.0 {
            fresh = self.all;
        } else {
            for i in 0..self.params.n {
                fresh |= (rng.chance(self.density) as u32) << i;
            }
        }
        let req = if self.persistent {
            self.held | fresh
        } else {
            fresh
        };
        let reset = rng.chance(1.0 / 2000.0);
        let accept = rng.chance(self.p_accept);
        self.inputs = ArbiterInputs { reset, req, accept };
        let p = self.ports.as_ref().expect("bind before drive");
        p.reset.set(reset as u64);
        p.req.set(req as u64);
        p.accept.set(accept as u64);
        self.cov.all_requesting += (req == self.all) as u64;
        self.cov.idle += (req == 0) as u64;
        self.cov.resets += reset as u64;
    }

    #[inline]
    fn check(&mut self, cycle: u64) -> Option<Mismatch> {
        let p = self.ports.as_ref().expect("bind before check");
        let grant = p.grant.get();
        let valid = p.grant_valid.get();
        let index = p.grant_index.get();
        self.rtl_grant = grant as u32;
        if self.scoreboard_only {
            let req = self.inputs.req as u64;
            let ok_grant = if req == 0 {
                grant == 0
            } else {
                grant.count_ones() == 1 && grant & req == grant
            };
            if !ok_grant {
                return Some(Mismatch::hex(cycle, "grant(one-hot of req)", req, grant));
            }
            if valid != (req != 0) as u64 {
                return Some(Mismatch::hex(
                    cycle,
                    "grant_valid",
                    (req != 0) as u64,
                    valid,
                ));
            }
            let want_index = if grant == 0 {
                0
            } else {
                grant.trailing_zeros() as u64
            };
            if index != want_index {
                return Some(Mismatch::hex(cycle, "grant_index", want_index, index));
            }
        } else {
            let o = self.golden.outputs(&self.golden_inputs());
            if grant != o.grant as u64 {
                return Some(Mismatch::hex(cycle, "grant", o.grant as u64, grant));
            }
            if valid != o.grant_valid as u64 {
                return Some(Mismatch::hex(
                    cycle,
                    "grant_valid",
                    o.grant_valid as u64,
                    valid,
                ));
            }
            if index != o.grant_index as u64 {
                return Some(Mismatch::hex(
                    cycle,
                    "grant_index",
                    o.grant_index as u64,
                    index,
                ));
            }
        }
        // Fairness scoreboard on the RTL's own grant.
        let i = self.inputs;
        if i.accept && valid == 1 {
            let g = index as usize;
            self.cov.accepted[g] += 1;
            for r in 0..self.params.n as usize {
                if (i.req >> r) & 1 == 0 || r == g {
                    self.wait[r] = 0;
                } else {
                    self.wait[r] += 1;
                    self.cov.max_wait = self.cov.max_wait.max(self.wait[r]);
                    if self.wait[r] > self.params.n - 1 {
                        return Some(Mismatch {
                            cycle,
                            port: format!("fairness(req[{r}])"),
                            expected: format!("<= {} grants of others", self.params.n - 1),
                            actual: format!("{}", self.wait[r]),
                        });
                    }
                }
            }
        } else {
            for (r, w) in self.wait.iter_mut().enumerate() {
                if (i.req >> r) & 1 == 0 {
                    *w = 0;
                }
            }
        }
        if i.reset {
            // The pointer restarts at 0: the bound restarts too.
            self.wait = [0; 16];
        }
        None
    }

    #[inline]
    fn advance(&mut self) {
        self.held = if self.inputs.accept && !self.inputs.reset {
            self.inputs.req & !self.rtl_grant
        } else if self.inputs.reset {
            0
        } else {
            self.inputs.req
        };
        self.golden.tick(&self.golden_inputs());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn points_parse_and_reject_bad_keys_and_values() {
        assert_eq!(point("n=7").unwrap().point(), "n=7");
        assert_eq!(point("").unwrap().point(), "n=4");
        let e = point("m=7").err().unwrap().to_string();
        assert!(e.contains("`m`") && e.contains('n'), "{e}");
        let e = point("n=17").err().unwrap().to_string();
        assert!(e.contains("arbiter.n") && e.contains("17"), "{e}");
        let e = point("n=x").err().unwrap().to_string();
        assert!(e.contains("`n`"), "{e}");
        assert!(matrix().len() >= 3);
        for b in matrix() {
            assert_eq!(point(&b.point()).unwrap().point(), b.point());
        }
    }
}
