//! Golden model of `secded`: extended Hamming code, single error correction,
//! double error detection, over `data_bits` (1..=120) data bits.
//!
//! Layout (classic positional Hamming, shortened): codeword positions are
//! numbered from 1. Hamming check bit `j` (`j < r`) sits at position `2^j`;
//! data bit `i` takes the `i`-th position that is not a power of two
//! (3, 5, 6, 7, 9, …). `r` is the smallest number with
//! `2^r >= data_bits + r + 1`. Check bit `j` is the parity of every data bit
//! whose position has bit `j` set, so the syndrome of a single flipped bit is
//! its position. Check bit `r` is the overall parity of all data and Hamming
//! check bits ("extended" Hamming): it tells an odd number of flips (1:
//! correctable) from an even one (2: detectable only).
//!
//! Check bits per width: 32 → 7 (r = 6), 64 → 8, 112 → 8 (r = 7); 120 is
//! the most 8 check bits can protect.
//!
//! Decoding, with Hamming syndrome `s` and overall parity `p`
//! (`p` = parity of every received bit):
//! - `s = 0, p = 0`: clean;
//! - `p = 1` and `s` names a position of the code (0 = the overall parity
//!   bit, a power of two = a Hamming check bit, else a data bit): one bit
//!   flipped; a flipped data bit is corrected. `single_err = 1`;
//! - `p = 0, s != 0`: two bits flipped. `double_err = 1`, data passed as
//!   received;
//! - `p = 1` and `s` beyond the last position (possible because the code is
//!   shortened): at least three bits flipped; reported as `double_err = 1`
//!   (uncorrectable) rather than miscorrected.
//!
//! The `secded` block's cosim top registers its outputs (latency 1 cycle);
//! see [`Secded`].

use anyhow::{bail, Result};
use serde::{Deserialize, Serialize};

/// Widest data word the model supports (8 check bits).
pub const SECDED_MAX_DATA_BITS: usize = 120;

/// Parameters of `secded`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct SecdedParams {
    /// Protected data bits (the RTL supports 32, 64 and 112).
    pub data_bits: usize,
}

impl Default for SecdedParams {
    /// The header's 112 bits outside its ECC field.
    fn default() -> Self {
        SecdedParams { data_bits: 112 }
    }
}

impl SecdedParams {
    /// Reject widths the code cannot protect with at most 8 check bits.
    pub fn validate(&self) -> Result<()> {
        if self.data_bits == 0 || self.data_bits > SECDED_MAX_DATA_BITS {
            bail!(
                "secded.data_bits = {}: must be in 1..={} (8 check bits protect at most {} data bits)",
                self.data_bits,
                SECDED_MAX_DATA_BITS,
                SECDED_MAX_DATA_BITS
            );
        }
        Ok(())
    }

    /// Hamming check bits `r` (without the overall parity bit).
    pub fn hamming_bits(&self) -> usize {
        let mut r = 1;
        while (1usize << r) < self.data_bits + r + 1 {
            r += 1;
        }
        r
    }

    /// All check bits: `r + 1`.
    pub fn check_bits(&self) -> usize {
        self.hamming_bits() + 1
    }
}

/// Which bit a single error hit.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CodeBit {
    /// Data bit `i`.
    Data(usize),
    /// Check bit `j` (`j = r` is the overall parity bit).
    Check(usize),
}

/// Result of decoding one word.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EccStatus {
    /// No error.
    Clean,
    /// One bit was flipped; the data is corrected.
    Corrected(CodeBit),
    /// Two (or an uncorrectable odd number of) bits flipped; data as received.
    Uncorrectable,
}

/// Output of [`SecdedCode::decode`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Decoded {
    /// Corrected data (as received when uncorrectable).
    pub data: u128,
    /// What the decoder found.
    pub status: EccStatus,
}

impl Decoded {
    /// A single error was corrected.
    pub fn single(&self) -> bool {
        matches!(self.status, EccStatus::Corrected(_))
    }
    /// An uncorrectable error was detected.
    pub fn double(&self) -> bool {
        self.status == EccStatus::Uncorrectable
    }
}

/// One instance of the code: positions and parity masks for a data width.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SecdedCode {
    data_bits: usize,
    r: usize,
    /// Codeword position (1-based) of each data bit.
    positions: Vec<u8>,
    /// Data bits covered by each Hamming check bit.
    masks: Vec<u128>,
    /// Data bit index at each position (`u8::MAX` where none).
    data_at: [u8; 128],
    data_mask: u128,
}

impl SecdedCode {
    /// Build the code for `params`.
    pub fn new(params: &SecdedParams) -> Result<Self> {
        params.validate()?;
        let data_bits = params.data_bits;
        let r = params.hamming_bits();
        let mut positions = Vec::with_capacity(data_bits);
        let mut pos = 1usize;
        while positions.len() < data_bits {
            if !pos.is_power_of_two() {
                positions.push(pos as u8);
            }
            pos += 1;
        }
        let mut masks = vec![0u128; r];
        let mut data_at = [u8::MAX; 128];
        for (i, &p) in positions.iter().enumerate() {
            data_at[p as usize] = i as u8;
            for (j, m) in masks.iter_mut().enumerate() {
                if p >> j & 1 == 1 {
                    *m |= 1u128 << i;
                }
            }
        }
        let data_mask = if data_bits == 128 {
            u128::MAX
        } else {
            (1u128 << data_bits) - 1
        };
        Ok(SecdedCode {
            data_bits,
            r,
            positions,
            masks,
            data_at,
            data_mask,
        })
    }

    /// Data bits.
    pub fn data_bits(&self) -> usize {
        self.data_bits
    }

    /// Hamming check bits `r`.
    pub fn hamming_bits(&self) -> usize {
        self.r
    }

    /// All check bits (`r + 1`).
    pub fn check_bits(&self) -> usize {
        self.r + 1
    }

    /// Codeword position (1-based) of data bit `i`.
    pub fn position(&self, i: usize) -> usize {
        self.positions[i] as usize
    }

    /// Highest codeword position in use (the last data bit's, or the last
    /// Hamming check bit's if that is higher).
    pub fn last_position(&self) -> usize {
        let d = self.positions.last().map(|&p| p as usize).unwrap_or(0);
        d.max(1 << (self.r - 1))
    }

    /// Data bits feeding Hamming check bit `j` (bit `i` set = data bit `i`).
    pub fn mask(&self, j: usize) -> u128 {
        self.masks[j]
    }

    /// Check bits of `data` (bits above `data_bits` ignored): bit `j < r` is
    /// Hamming check bit `j`, bit `r` the overall parity.
    #[inline]
    pub fn encode(&self, data: u128) -> u16 {
        let d = data & self.data_mask;
        let mut c = 0u16;
        for (j, m) in self.masks.iter().enumerate() {
            c |= (((d & m).count_ones() & 1) as u16) << j;
        }
        let overall = (d.count_ones() + c.count_ones()) & 1;
        c | (overall as u16) << self.r
    }

    /// Decode a received `(data, check)` pair (bits above the widths ignored).
    #[inline]
    pub fn decode(&self, data: u128, check: u16) -> Decoded {
        let d = data & self.data_mask;
        let c = check & ((1u16 << (self.r + 1)) - 1);
        let expect = self.encode(d);
        let s = ((expect ^ c) & ((1u16 << self.r) - 1)) as usize;
        let p = (d.count_ones() + c.count_ones()) & 1 == 1;
        let status = match (s, p) {
            (0, false) => EccStatus::Clean,
            (0, true) => EccStatus::Corrected(CodeBit::Check(self.r)),
            (_, false) => EccStatus::Uncorrectable,
            (s, true) if s.is_power_of_two() && s.trailing_zeros() < self.r as u32 => {
                EccStatus::Corrected(CodeBit::Check(s.trailing_zeros() as usize))
            }
            (s, true) => match self.data_at.get(s) {
                Some(&i) if i != u8::MAX => EccStatus::Corrected(CodeBit::Data(i as usize)),
                _ => EccStatus::Uncorrectable,
            },
        };
        let data = match status {
            EccStatus::Corrected(CodeBit::Data(i)) => d ^ (1u128 << i),
            _ => d,
        };
        Decoded { data, status }
    }
}

/// Inputs of one cycle of the `secded` cosim top.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SecdedInputs {
    /// Data to encode.
    pub enc_data: u128,
    /// Received data to decode.
    pub dec_data: u128,
    /// Received check bits.
    pub dec_check: u16,
}

/// Outputs of the `secded` top (registered: they show the previous cycle's inputs).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SecdedOutputs {
    /// Check bits of `enc_data`.
    pub enc_check: u16,
    /// `dec_data` with a single error corrected.
    pub corrected: u128,
    /// A single error was corrected (port `single_err`).
    pub single_err: bool,
    /// An uncorrectable error was detected (port `double_err`).
    pub double_err: bool,
}

/// Cycle-level model of the `secded` top: an encoder and a decoder side by
/// side, each followed by one register stage (latency 1; power-on value 0).
#[derive(Clone, Debug)]
pub struct Secded {
    code: SecdedCode,
    out: SecdedOutputs,
}

impl Secded {
    /// A model at power-on.
    pub fn new(params: &SecdedParams) -> Result<Self> {
        Ok(Secded {
            code: SecdedCode::new(params)?,
            out: SecdedOutputs::default(),
        })
    }

    /// The code used.
    pub fn code(&self) -> &SecdedCode {
        &self.code
    }

    /// Back to power-on.
    pub fn reset(&mut self) {
        self.out = SecdedOutputs::default();
    }

    /// Outputs during this cycle: the registered results of the last edge.
    #[inline]
    pub fn outputs(&self, _i: &SecdedInputs) -> SecdedOutputs {
        self.out
    }

    /// The clock edge: register this cycle's encode and decode results.
    #[inline]
    pub fn tick(&mut self, i: &SecdedInputs) {
        let d = self.code.decode(i.dec_data, i.dec_check);
        self.out = SecdedOutputs {
            enc_check: self.code.encode(i.enc_data),
            corrected: d.data,
            single_err: d.single(),
            double_err: d.double(),
        };
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::Rng;

    const WIDTHS: [usize; 6] = [1, 8, 32, 64, 112, 120];

    fn rand_data(rng: &mut Rng, bits: usize) -> u128 {
        rng.next_u128() & ((1u128 << bits) - 1)
    }

    /// Reference from first principles: lay the codeword out by position
    /// and XOR the positions of the set bits.
    fn reference_check(data: u128, bits: usize) -> (u16, usize) {
        let p = SecdedParams { data_bits: bits };
        let r = p.hamming_bits();
        let mut word = vec![false; 256];
        let mut pos = 1usize;
        for i in 0..bits {
            while pos.is_power_of_two() {
                pos += 1;
            }
            word[pos] = data >> i & 1 == 1;
            pos += 1;
        }
        let mut syn = 0usize;
        for (q, &b) in word.iter().enumerate() {
            if b {
                syn ^= q;
            }
        }
        let mut check = syn as u16; // check bit j makes bit j of the syndrome 0
        let ones = data.count_ones() + check.count_ones();
        check |= ((ones & 1) as u16) << r;
        (check, r)
    }

    #[test]
    fn check_bit_counts() {
        let cb = |d| SecdedParams { data_bits: d }.check_bits();
        assert_eq!(cb(32), 7);
        assert_eq!(cb(57), 7);
        assert_eq!(cb(58), 8);
        assert_eq!(cb(64), 8);
        assert_eq!(cb(112), 8);
        assert_eq!(cb(120), 8);
        assert!(SecdedParams { data_bits: 121 }.validate().is_err());
        let e = SecdedParams { data_bits: 0 }
            .validate()
            .unwrap_err()
            .to_string();
        assert!(e.contains("secded.data_bits") && e.contains('0'), "{e}");
    }

    #[test]
    fn encode_matches_positional_reference() {
        let mut rng = Rng::new(5);
        for bits in WIDTHS {
            let code = SecdedCode::new(&SecdedParams { data_bits: bits }).unwrap();
            for _ in 0..2000 {
                let d = rand_data(&mut rng, bits);
                assert_eq!(code.encode(d), reference_check(d, bits).0, "bits {bits}");
                let dec = code.decode(d, code.encode(d));
                assert_eq!(dec.data, d);
                assert_eq!(dec.status, EccStatus::Clean);
            }
        }
    }

    /// Every single-bit error position, data and check, on random words.
    #[test]
    fn every_single_error_is_corrected() {
        let mut rng = Rng::new(6);
        for bits in WIDTHS {
            let code = SecdedCode::new(&SecdedParams { data_bits: bits }).unwrap();
            let cb = code.check_bits();
            for _ in 0..50 {
                let d = rand_data(&mut rng, bits);
                let c = code.encode(d);
                for i in 0..bits {
                    let dec = code.decode(d ^ (1u128 << i), c);
                    assert_eq!(dec.data, d, "bits {bits} data bit {i}");
                    assert_eq!(dec.status, EccStatus::Corrected(CodeBit::Data(i)));
                    assert!(dec.single() && !dec.double());
                }
                for j in 0..cb {
                    let dec = code.decode(d, c ^ (1 << j));
                    assert_eq!(dec.data, d, "bits {bits} check bit {j}");
                    assert_eq!(dec.status, EccStatus::Corrected(CodeBit::Check(j)));
                }
            }
        }
    }

    /// Random double errors anywhere in the codeword are detected, never
    /// "corrected".
    #[test]
    fn random_double_errors_are_detected() {
        let mut rng = Rng::new(7);
        for bits in WIDTHS {
            let code = SecdedCode::new(&SecdedParams { data_bits: bits }).unwrap();
            let n = (bits + code.check_bits()) as u64;
            for _ in 0..20_000 {
                let d = rand_data(&mut rng, bits);
                let c = code.encode(d);
                let a = rng.below(n);
                let mut b = rng.below(n - 1);
                if b >= a {
                    b += 1;
                }
                let (mut ed, mut ec) = (d, c);
                for q in [a, b] {
                    if (q as usize) < bits {
                        ed ^= 1u128 << q;
                    } else {
                        ec ^= 1 << (q as usize - bits);
                    }
                }
                let dec = code.decode(ed, ec);
                assert!(
                    dec.double() && !dec.single(),
                    "bits {bits} errors at {a},{b}"
                );
                assert_eq!(dec.data, ed, "uncorrectable data passes as received");
            }
        }
    }

    #[test]
    fn shortened_code_reports_out_of_range_syndrome() {
        // 112 data bits use positions up to 119; a syndrome of 127 with odd
        // parity names no bit: three or more flips, uncorrectable.
        let code = SecdedCode::new(&SecdedParams { data_bits: 112 }).unwrap();
        assert_eq!(code.last_position(), 119);
        // Data 0 encodes to check 0; flipping the seven Hamming check bits
        // gives s = 127 and odd parity.
        assert_eq!(code.encode(0), 0);
        let dec = code.decode(0, 0x7F);
        assert_eq!(dec.status, EccStatus::Uncorrectable);
        assert_eq!(dec.data, 0);
    }

    #[test]
    fn top_model_is_registered() {
        let p = SecdedParams { data_bits: 64 };
        let mut m = Secded::new(&p).unwrap();
        let i = SecdedInputs {
            enc_data: 0xDEAD_BEEF,
            dec_data: 0xDEAD_BEEF ^ 4,
            dec_check: m.code().encode(0xDEAD_BEEF),
        };
        assert_eq!(m.outputs(&i), SecdedOutputs::default());
        m.tick(&i);
        let o = m.outputs(&SecdedInputs::default());
        assert_eq!(o.enc_check, m.code().encode(0xDEAD_BEEF));
        assert_eq!(o.corrected, 0xDEAD_BEEF);
        assert!(o.single_err && !o.double_err);
    }
}
