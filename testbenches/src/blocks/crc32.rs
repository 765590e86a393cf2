//! Co-simulation bench of `crc32`: RTL vs `exanet_sim::common::crc32`.
//!
//! Stimulus: packets of random length (a `start` on about one flit in
//! six), `valid` about three cycles in four, random data in every bit (the
//! bytes above `bytes` are garbage and must be ignored). `bytes` is a full
//! flit 70 % of the time, a random partial count 25 %, and an out-of-range
//! value (0 or above width/8, defined as a full flit) 5 %. `start` also
//! comes on idle cycles (empties the packet), and rare reset pulses hit
//! mid-packet. `crc` is compared every cycle.

use super::BlockInfo;
use crate::cosim::{cmp, Bench, Mismatch};
use crate::verilator::{Port, Sim};
use anyhow::Result;
use exanet_hdl::common::crc32::emit_crc32;
use exanet_hdl::emit::Emitted;
use exanet_sim::common::crc32::{Crc32, Crc32Inputs, Crc32Params, CRC32_MAX_WORDS};
use exanet_sim::point;
use exanet_sim::rng::Rng;

/// Registry entry for `exanet cosim crc32`.
pub fn info() -> BlockInfo {
    BlockInfo {
        name: "crc32",
        about: "CRC-32 (IEEE 802.3) over one flit per cycle, partial last flit",
        matrix,
        point,
    }
}

/// Default matrix: every supported width.
fn matrix() -> Vec<Box<dyn Bench>> {
    [64, 128, 256]
        .into_iter()
        .map(|width| {
            Box::new(Crc32Bench::new(Crc32Params { width }).expect("matrix point is valid"))
                as Box<dyn Bench>
        })
        .collect()
}

/// Parse `width=..` (default 128).
fn point(text: &str) -> Result<Box<dyn Bench>> {
    Ok(Box::new(Crc32Bench::new(point::parse(text)?)?))
}

/// A deliberately wrong golden model, to show the bench catches a mismatch.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Crc32Fault {
    /// The golden model is told every flit is full (ignores `bytes`).
    IgnoreBytes,
    /// The golden model never sees `start` (packets run together).
    IgnoreStart,
}

/// How often a run reached each case; the integration test asserts each was.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Crc32Coverage {
    /// Valid full flits.
    pub full_flits: u64,
    /// Valid partial flits.
    pub partial_flits: u64,
    /// Valid flits with `bytes` out of range.
    pub out_of_range: u64,
    /// `start` with a valid flit.
    pub starts: u64,
    /// `start` on an idle cycle.
    pub idle_starts: u64,
    /// Reset pulses.
    pub resets: u64,
}

#[derive(Clone)]
struct Ports {
    reset: Port,
    start: Port,
    valid: Port,
    data: Port,
    bytes: Port,
    crc: Port,
}

/// The `crc32` bench at one parameter point.
pub struct Crc32Bench {
    params: Crc32Params,
    golden: Crc32,
    fault: Option<Crc32Fault>,
    n: u64,
    bytes_max: u64,
    data_words: usize,
    ports: Option<Ports>,
    inputs: Crc32Inputs,
    golden_inputs: Crc32Inputs,
    cov: Crc32Coverage,
}

impl Crc32Bench {
    /// A bench whose RTL and golden model share `params`.
    pub fn new(params: Crc32Params) -> Result<Self> {
        Self::with_fault(params, None)
    }

    /// A bench whose golden model is wrong in the way `fault` says.
    pub fn with_fault(params: Crc32Params, fault: Option<Crc32Fault>) -> Result<Self> {
        let golden = Crc32::new(&params)?;
        Ok(Crc32Bench {
            n: params.flit_bytes() as u64,
            bytes_max: (1u64 << params.bytes_port_bits()) - 1,
            data_words: params.width / 32,
            golden,
            fault,
            params,
            ports: None,
            inputs: Crc32Inputs::default(),
            golden_inputs: Crc32Inputs::default(),
            cov: Crc32Coverage::default(),
        })
    }

    /// Cases reached since the last [`Bench::reset`].
    pub fn coverage(&self) -> Crc32Coverage {
        self.cov
    }
}

impl Bench for Crc32Bench {
    fn block(&self) -> &str {
        "crc32"
    }

    fn point(&self) -> String {
        point::to_text(&self.params)
    }

    fn emit(&self) -> Result<Emitted> {
        emit_crc32(&self.params)
    }

    fn bind(&mut self, sim: &Sim) -> Result<()> {
        self.ports = Some(Ports {
            reset: sim.port_w("reset", 1)?,
            start: sim.port_w("start", 1)?,
            valid: sim.port_w("valid", 1)?,
            data: sim.port_w("data", self.params.width as u32)?,
            bytes: sim.port_w("bytes", self.params.bytes_port_bits())?,
            crc: sim.port_w("crc", 32)?,
        });
        Ok(())
    }

    fn reset(&mut self) {
        self.golden.reset();
        self.inputs = Crc32Inputs::default();
        self.golden_inputs = Crc32Inputs::default();
        self.cov = Crc32Coverage::default();
    }

    #[inline]
    fn drive(&mut self, rng: &mut Rng, _cycle: u64) {
        let reset = rng.chance(1.0 / 3000.0);
        let valid = rng.chance(0.75);
        let start = rng.chance(if valid { 0.16 } else { 0.02 });
        let r = rng.below(100);
        let bytes = if r < 70 {
            self.n
        } else if r < 95 {
            1 + rng.below(self.n - 1)
        } else if rng.chance(0.5) || self.bytes_max == self.n {
            0
        } else {
            self.n + 1 + rng.below(self.bytes_max - self.n)
        };
        let mut data = [0u64; CRC32_MAX_WORDS];
        for d in data.iter_mut().take(self.params.width / 64) {
            *d = rng.next_u64();
        }
        self.inputs = Crc32Inputs {
            reset,
            start,
            valid,
            data,
            bytes: bytes as u32,
        };
        self.golden_inputs = self.inputs;
        match self.fault {
            Some(Crc32Fault::IgnoreBytes) => self.golden_inputs.bytes = self.n as u32,
            Some(Crc32Fault::IgnoreStart) => self.golden_inputs.start = false,
            None => {}
        }
        let mut words = [0u32; 2 * CRC32_MAX_WORDS];
        for (w, d) in words.chunks_exact_mut(2).zip(data) {
            w[0] = d as u32;
            w[1] = (d >> 32) as u32;
        }
        let p = self.ports.as_ref().expect("bind before drive");
        p.reset.set(reset as u64);
        p.start.set(start as u64);
        p.valid.set(valid as u64);
        p.bytes.set(bytes);
        p.data.set_words(&words[..self.data_words]);
        let c = &mut self.cov;
        c.resets += reset as u64;
        c.idle_starts += (start && !valid) as u64;
        if valid {
            c.starts += start as u64;
            if bytes == self.n {
                c.full_flits += 1;
            } else if bytes == 0 || bytes > self.n {
                c.out_of_range += 1;
            } else {
                c.partial_flits += 1;
            }
        }
    }

    #[inline]
    fn check(&mut self, cycle: u64) -> Option<Mismatch> {
        let o = self.golden.outputs(&self.golden_inputs);
        let p = self.ports.as_ref().expect("bind before check");
        cmp(cycle, "crc", o.crc as u64, p.crc.get())
    }

    #[inline]
    fn advance(&mut self) {
        self.golden.tick(&self.golden_inputs);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn points_parse_and_reject_bad_keys_and_values() {
        let b = point("width=256").unwrap();
        assert_eq!(b.point(), "width=256");
        assert_eq!(b.block(), "crc32");
        assert_eq!(point("").unwrap().point(), "width=128");
        let e = point("widht=64").err().unwrap().to_string();
        assert!(e.contains("widht") && e.contains("width"), "{e}");
        let e = point("width=96").err().unwrap().to_string();
        assert!(e.contains("crc32.width") && e.contains("96"), "{e}");
        let ms = matrix();
        assert!(ms.len() >= 3);
        for b in ms {
            assert_eq!(point(&b.point()).unwrap().point(), b.point());
        }
    }
}
