//! Raw-pointer port handles into a Verilated model.
//!
//! Verilator stores a port of 1–8 bits in a `uint8_t`, 9–16 in `uint16_t`,
//! 17–32 in `uint32_t`, 33–64 in `uint64_t` and wider ones in an array of
//! `uint32_t` words, least significant word first.

use std::ffi::c_void;

/// Direction of a top-level port.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PortDir {
    /// Driven by the harness.
    In,
    /// Driven by the model.
    Out,
    /// Both (not used by exanet designs).
    InOut,
}

/// Name, width and direction of a port, parsed from `V<top>.h`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PortInfo {
    /// Port name as in the Verilog.
    pub name: String,
    /// Width in bits.
    pub width: u32,
    /// Direction.
    pub dir: PortDir,
}

/// A handle to one port: a raw pointer into the live model and its width.
///
/// Valid while the [`super::Sim`] it came from lives; the harness hands these
/// out once and benches keep them, so every access is one memory operation.
/// Sharing ownership of the model through the ports (so a port could not
/// outlive it) was tried and reverted: it kept two models of one library
/// alive at once, and freeing the second deadlocked Verilator's context.
#[derive(Clone, Copy, Debug)]
pub struct Port {
    ptr: *mut c_void,
    width: u32,
    dir: PortDir,
}

impl Port {
    pub(crate) fn new(ptr: *mut c_void, width: u32, dir: PortDir) -> Port {
        Port { ptr, width, dir }
    }

    /// Width in bits.
    #[inline]
    pub fn width(&self) -> u32 {
        self.width
    }

    /// Direction.
    #[inline]
    pub fn dir(&self) -> PortDir {
        self.dir
    }

    #[inline(always)]
    fn mask(&self) -> u64 {
        if self.width >= 64 {
            u64::MAX
        } else {
            (1u64 << self.width) - 1
        }
    }

    /// The value of a port of up to 64 bits (the low 64 bits of a wider one).
    #[inline(always)]
    pub fn get(&self) -> u64 {
        // SAFETY: ptr points at the Verilator storage of this width (see module doc).
        unsafe {
            match self.width {
                0..=8 => *(self.ptr as *const u8) as u64,
                9..=16 => *(self.ptr as *const u16) as u64,
                17..=32 => *(self.ptr as *const u32) as u64,
                33..=64 => *(self.ptr as *const u64),
                _ => {
                    let w = self.ptr as *const u32;
                    (*w as u64) | ((*w.add(1) as u64) << 32)
                }
            }
        }
    }

    /// Set a port of up to 64 bits; bits above the width are dropped.
    #[inline(always)]
    pub fn set(&self, v: u64) {
        let v = v & self.mask();
        // SAFETY: as in `get`.
        unsafe {
            match self.width {
                0..=8 => *(self.ptr as *mut u8) = v as u8,
                9..=16 => *(self.ptr as *mut u16) = v as u16,
                17..=32 => *(self.ptr as *mut u32) = v as u32,
                33..=64 => *(self.ptr as *mut u64) = v,
                _ => {
                    let mut words = [0u32; 2];
                    words[0] = v as u32;
                    words[1] = (v >> 32) as u32;
                    self.set_words(&words);
                }
            }
        }
    }

    /// Number of 32-bit words of a wide port.
    #[inline]
    pub fn words(&self) -> usize {
        self.width.div_ceil(32) as usize
    }

    /// The value of a port of up to 128 bits.
    #[inline]
    pub fn get_u128(&self) -> u128 {
        if self.width <= 64 {
            return self.get() as u128;
        }
        let mut w = [0u32; 4];
        let n = self.words().min(4);
        self.get_words(&mut w[..n]);
        w.iter()
            .rev()
            .fold(0u128, |acc, &x| (acc << 32) | x as u128)
    }

    /// Set a port of up to 128 bits; bits above the width are dropped.
    #[inline]
    pub fn set_u128(&self, v: u128) {
        if self.width <= 64 {
            return self.set(v as u64);
        }
        let w = [
            v as u32,
            (v >> 32) as u32,
            (v >> 64) as u32,
            (v >> 96) as u32,
        ];
        let n = self.words().min(4);
        self.set_words(&w[..n]);
    }

    /// Copy the low `out.len()` words of a wide port (least significant first).
    #[inline]
    pub fn get_words(&self, out: &mut [u32]) {
        if self.width <= 64 {
            let v = self.get();
            for (i, o) in out.iter_mut().enumerate() {
                *o = if i < 2 { (v >> (32 * i)) as u32 } else { 0 };
            }
            return;
        }
        let n = out.len().min(self.words());
        // SAFETY: a wide port is an array of `words()` u32.
        unsafe {
            let w = self.ptr as *const u32;
            for (i, o) in out.iter_mut().enumerate() {
                *o = if i < n { *w.add(i) } else { 0 };
            }
        }
    }

    /// Write the words of a wide port (least significant first); missing
    /// words are zero, bits above the width are dropped.
    #[inline]
    pub fn set_words(&self, words: &[u32]) {
        if self.width <= 64 {
            let v = words.first().copied().unwrap_or(0) as u64
                | (words.get(1).copied().unwrap_or(0) as u64) << 32;
            return self.set(v);
        }
        let n = self.words();
        let top_bits = self.width - 32 * (n as u32 - 1);
        // SAFETY: a wide port is an array of `n` u32.
        unsafe {
            let w = self.ptr as *mut u32;
            for i in 0..n {
                let mut x = words.get(i).copied().unwrap_or(0);
                if i == n - 1 && top_bits < 32 {
                    x &= (1u32 << top_bits) - 1;
                }
                *w.add(i) = x;
            }
        }
    }
}
