//! Co-simulation bench of `secded`: RTL vs `exanet_sim::common::secded`.
//!
//! Stimulus, every cycle: a random word to encode, and a random word with
//! its correct check bits into which 0 (30 %), 1 (35 %), 2 (30 %) or 3..=6
//! (5 %) bit errors are injected at random distinct positions over data and
//! check bits. Every output (`enc_check`, `corrected`, `single_err`,
//! `double_err`) is compared every cycle; the top's outputs are registered,
//! so the golden model is too.

use super::BlockInfo;
use crate::cosim::{cmp, Bench, Mismatch};
use crate::verilator::{Port, Sim};
use anyhow::Result;
use exanet_hdl::common::secded::{emit_secded, SUPPORTED_DATA_BITS};
use exanet_hdl::emit::Emitted;
use exanet_sim::common::secded::{Secded, SecdedCode, SecdedInputs, SecdedParams};
use exanet_sim::point;
use exanet_sim::rng::Rng;

/// Registry entry for `exanet cosim secded`.
pub fn info() -> BlockInfo {
    BlockInfo {
        name: "secded",
        about: "extended Hamming SECDED encoder + decoder (outputs registered)",
        matrix,
        point,
    }
}

/// Default matrix: every supported width.
fn matrix() -> Vec<Box<dyn Bench>> {
    [32, 64, 112]
        .into_iter()
        .map(|data_bits| {
            Box::new(SecdedBench::new(SecdedParams { data_bits }).expect("matrix point is valid"))
                as Box<dyn Bench>
        })
        .collect()
}

/// Parse `data_bits=..` (default 112, the header's).
fn point(text: &str) -> Result<Box<dyn Bench>> {
    Ok(Box::new(SecdedBench::new(point::parse(text)?)?))
}

/// A deliberately wrong golden model, to show the bench catches a mismatch.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SecdedFault {
    /// The golden model never corrects: `corrected` = data as received.
    NoCorrection,
    /// The golden model reports every uncorrectable error as a single one.
    DoubleAsSingle,
}

/// How often each error count was injected; the integration test asserts
/// each was.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SecdedCoverage {
    /// Clean words.
    pub clean: u64,
    /// One flipped data bit.
    pub single_data: u64,
    /// One flipped check bit.
    pub single_check: u64,
    /// Two flipped bits.
    pub double: u64,
    /// Three or more flipped bits.
    pub multiple: u64,
}

#[derive(Clone)]
struct Ports {
    enc_data: Port,
    enc_check: Port,
    dec_data: Port,
    dec_check: Port,
    corrected: Port,
    single_err: Port,
    double_err: Port,
}

/// The `secded` bench at one parameter point.
pub struct SecdedBench {
    params: SecdedParams,
    golden: Secded,
    code: SecdedCode,
    fault: Option<SecdedFault>,
    data_mask: u128,
    check_bits: usize,
    ports: Option<Ports>,
    inputs: SecdedInputs,
    /// `dec_data` of the previous cycle (what a non-correcting model shows).
    last_received: u128,
    cov: SecdedCoverage,
}

impl SecdedBench {
    /// A bench whose RTL and golden model share `params`.
    pub fn new(params: SecdedParams) -> Result<Self> {
        Self::with_fault(params, None)
    }

    /// A bench whose golden model is wrong in the way `fault` says.
    pub fn with_fault(params: SecdedParams, fault: Option<SecdedFault>) -> Result<Self> {
        let golden = Secded::new(&params)?;
        if !SUPPORTED_DATA_BITS.contains(&params.data_bits) {
            anyhow::bail!(
                "secded.data_bits = {}: not supported by the RTL; supported: {SUPPORTED_DATA_BITS:?}",
                params.data_bits
            );
        }
        let code = golden.code().clone();
        Ok(SecdedBench {
            data_mask: (1u128 << params.data_bits) - 1,
            check_bits: code.check_bits(),
            golden,
            code,
            fault,
            params,
            ports: None,
            inputs: SecdedInputs::default(),
            last_received: 0,
            cov: SecdedCoverage::default(),
        })
    }

    /// Error counts injected since the last [`Bench::reset`].
    pub fn coverage(&self) -> SecdedCoverage {
        self.cov
    }
}

impl Bench for SecdedBench {
    fn block(&self) -> &str {
        "secded"
    }

    fn point(&self) -> String {
        point::to_text(&self.params)
    }

    fn emit(&self) -> Result<Emitted> {
        emit_secded(&self.params)
    }

    fn bind(&mut self, sim: &Sim) -> Result<()> {
        let d = self.params.data_bits as u32;
        let c = self.check_bits as u32;
        self.ports = Some(Ports {
            enc_data: sim.port_w("enc_data", d)?,
            enc_check: sim.port_w("enc_check", c)?,
            dec_data: sim.port_w("dec_data", d)?,
            dec_check: sim.port_w("dec_check", c)?,
            corrected: sim.port_w("corrected", d)?,
            single_err: sim.port_w("single_err", 1)?,
            double_err: sim.port_w("double_err", 1)?,
        });
        Ok(())
    }

    fn reset(&mut self) {
        self.golden.reset();
        self.inputs = SecdedInputs::default();
        self.last_received = 0;
        self.cov = SecdedCoverage::default();
    }

    #[inline]
    fn drive(&mut self, rng: &mut Rng, _cycle: u64) {
        let d = self.params.data_bits;
        let n = (d + self.check_bits) as u64;
        let enc_data = rng.next_u128() & self.data_mask;
        let mut data = rng.next_u128() & self.data_mask;
        let mut check = self.code.encode(data);
        let r = rng.below(100);
        let flips = match r {
            0..=29 => 0,
            30..=64 => 1,
            65..=94 => 2,
            _ => 3 + rng.below(4),
        };
        // Distinct random positions: bits of a small set.
        let mut hit = [0u8; 6];
        let mut k = 0;
        while k < flips as usize {
            let q = rng.below(n) as u8;
            if !hit[..k].contains(&q) {
                hit[k] = q;
                k += 1;
            }
        }
        for &q in &hit[..k] {
            if (q as usize) < d {
                data ^= 1u128 << q;
            } else {
                check ^= 1 << (q as usize - d);
            }
        }
        let c = &mut self.cov;
        match k {
            0 => c.clean += 1,
            1 if (hit[0] as usize) < d => c.single_data += 1,
            1 => c.single_check += 1,
            2 => c.double += 1,
            _ => c.multiple += 1,
        }
        self.last_received = self.inputs.dec_data;
        self.inputs = SecdedInputs {
            enc_data,
            dec_data: data,
            dec_check: check,
        };
        let p = self.ports.as_ref().expect("bind before drive");
        p.enc_data.set_u128(enc_data);
        p.dec_data.set_u128(data);
        p.dec_check.set(check as u64);
    }

    #[inline]
    fn check(&mut self, cycle: u64) -> Option<Mismatch> {
        let mut o = self.golden.outputs(&self.inputs);
        match self.fault {
            Some(SecdedFault::NoCorrection) => o.corrected = self.last_received,
            Some(SecdedFault::DoubleAsSingle) => {
                o.single_err |= o.double_err;
                o.double_err = false;
            }
            None => {}
        }
        let p = self.ports.as_ref().expect("bind before check");
        cmp(cycle, "enc_check", o.enc_check as u64, p.enc_check.get())
            .or_else(|| cmp(cycle, "corrected", o.corrected, p.corrected.get_u128()))
            .or_else(|| cmp(cycle, "single_err", o.single_err as u64, p.single_err.get()))
            .or_else(|| cmp(cycle, "double_err", o.double_err as u64, p.double_err.get()))
    }

    #[inline]
    fn advance(&mut self) {
        self.golden.tick(&self.inputs);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn points_parse_and_reject_bad_keys_and_values() {
        let b = point("data_bits=64").unwrap();
        assert_eq!(b.point(), "data_bits=64");
        assert_eq!(b.block(), "secded");
        assert_eq!(point("").unwrap().point(), "data_bits=112");
        let e = point("bits=64").err().unwrap().to_string();
        assert!(e.contains("bits") && e.contains("data_bits"), "{e}");
        let e = point("data_bits=0").err().unwrap().to_string();
        assert!(e.contains("secded.data_bits"), "{e}");
        let e = point("data_bits=48").err().unwrap().to_string();
        assert!(e.contains("secded.data_bits") && e.contains("48"), "{e}");
        let ms = matrix();
        assert!(ms.len() >= 3);
        for b in ms {
            assert_eq!(point(&b.point()).unwrap().point(), b.point());
        }
    }
}
