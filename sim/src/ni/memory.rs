//! Sparse byte-addressed memory: the node's DRAM as the NI's AXI4 master sees it.
//!
//! Pages of 4 KiB are allocated on first write; bytes never written read as
//! zero. Two memories are equal when every byte is equal (an absent page
//! equals a page of zeros).
//!
//! **AXI4 error responses** ([`SparseMemory::set_fault`]): a 16-byte line
//! (one AXI4 beat of the NI's 128-bit master) may answer SLVERR or DECERR
//! instead of OKAY, as a failing or absent slave would. A read beat of a
//! faulty line returns its resp and no data (the NI reads its bytes as
//! zero: [`SparseMemory::read_checked_into`]); a write burst touching a
//! faulty line gets that resp on B ([`SparseMemory::write_resp`], DECERR
//! before SLVERR). Plain [`SparseMemory::read`] / [`SparseMemory::write`]
//! ignore faults (backdoor). The fault map is not part of equality.

use std::collections::{BTreeMap, HashMap};

/// AXI4 RRESP / BRESP codes.
pub mod resp {
    /// Normal access success.
    pub const OKAY: u8 = 0;
    /// Slave error.
    pub const SLVERR: u8 = 2;
    /// Decode error (no slave at the address).
    pub const DECERR: u8 = 3;
}

/// Error kinds seen by an access, as a bit mask: [`ERR_SLVERR`] | [`ERR_DECERR`].
pub type AxiErrKinds = u8;
/// Some beat answered SLVERR.
pub const ERR_SLVERR: AxiErrKinds = 1;
/// Some beat answered DECERR.
pub const ERR_DECERR: AxiErrKinds = 2;

/// The kind bit of an AXI4 resp (0 for OKAY / EXOKAY).
pub fn err_kind(resp: u8) -> AxiErrKinds {
    match resp {
        resp::SLVERR => ERR_SLVERR,
        resp::DECERR => ERR_DECERR,
        _ => 0,
    }
}

/// Page size of the sparse store.
pub const PAGE_BYTES: usize = 4096;

/// One write the NI made to memory (one per accepted data packet).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MemWrite {
    /// First byte address.
    pub addr: u64,
    /// Bytes written, from `addr` upwards.
    pub data: Vec<u8>,
}

/// Sparse memory.
#[derive(Clone, Debug, Default)]
pub struct SparseMemory {
    pages: HashMap<u64, Box<[u8; PAGE_BYTES]>>,
    /// Faulty 16-byte lines (address / 16) and their resp.
    faults: BTreeMap<u64, u8>,
}

impl SparseMemory {
    /// An all-zero memory.
    pub fn new() -> Self {
        Self::default()
    }

    /// Copy `out.len()` bytes starting at `addr` into `out`.
    pub fn read_into(&self, mut addr: u64, mut out: &mut [u8]) {
        while !out.is_empty() {
            let off = (addr % PAGE_BYTES as u64) as usize;
            let n = (PAGE_BYTES - off).min(out.len());
            let (head, tail) = out.split_at_mut(n);
            match self.pages.get(&(addr / PAGE_BYTES as u64)) {
                Some(p) => head.copy_from_slice(&p[off..off + n]),
                None => head.fill(0),
            }
            out = tail;
            addr += n as u64;
        }
    }

    /// `len` bytes starting at `addr`.
    pub fn read(&self, addr: u64, len: usize) -> Vec<u8> {
        let mut v = vec![0; len];
        self.read_into(addr, &mut v);
        v
    }

    /// Write `data` starting at `addr`.
    pub fn write(&mut self, mut addr: u64, mut data: &[u8]) {
        while !data.is_empty() {
            let off = (addr % PAGE_BYTES as u64) as usize;
            let n = (PAGE_BYTES - off).min(data.len());
            let page = self
                .pages
                .entry(addr / PAGE_BYTES as u64)
                .or_insert_with(|| Box::new([0; PAGE_BYTES]));
            page[off..off + n].copy_from_slice(&data[..n]);
            data = &data[n..];
            addr += n as u64;
        }
    }

    /// Make the 16-byte line holding `addr` answer `resp` (SLVERR or
    /// DECERR; OKAY removes the fault).
    pub fn set_fault(&mut self, addr: u64, resp: u8) {
        if err_kind(resp) == 0 {
            self.faults.remove(&(addr / 16));
        } else {
            self.faults.insert(addr / 16, resp);
        }
    }

    /// The resp of the 16-byte line holding `addr`.
    pub fn fault(&self, addr: u64) -> u8 {
        self.faults.get(&(addr / 16)).copied().unwrap_or(resp::OKAY)
    }

    /// Faulty lines, as (line address, resp), ascending.
    pub fn faults(&self) -> Vec<(u64, u8)> {
        self.faults.iter().map(|(&l, &r)| (l * 16, r)).collect()
    }

    /// The error kinds of the lines `[addr, addr + len)` touches.
    pub fn fault_kinds(&self, addr: u64, len: usize) -> AxiErrKinds {
        if len == 0 {
            return 0;
        }
        let (a, b) = (addr / 16, (addr + len as u64 - 1) / 16);
        self.faults
            .range(a..=b)
            .fold(0, |k, (_, &r)| k | err_kind(r))
    }

    /// As [`SparseMemory::read_into`] through the AXI4 read master: the
    /// bytes of a faulty line read as zero; returns the error kinds of
    /// the beats read (every line `[addr, addr + len)` touches).
    pub fn read_checked_into(&self, addr: u64, out: &mut [u8]) -> AxiErrKinds {
        self.read_into(addr, out);
        if out.is_empty() {
            return 0;
        }
        let (a, b) = (addr / 16, (addr + out.len() as u64 - 1) / 16);
        let mut kinds = 0;
        for (&line, &r) in self.faults.range(a..=b) {
            kinds |= err_kind(r);
            let lo = (line * 16).max(addr);
            let hi = (line * 16 + 16).min(addr + out.len() as u64);
            out[(lo - addr) as usize..(hi - addr) as usize].fill(0);
        }
        kinds
    }

    /// The B resp of a write burst covering `[addr, addr + len)`: DECERR
    /// if a line it touches answers DECERR, else SLVERR if one answers
    /// SLVERR, else OKAY.
    pub fn write_resp(&self, addr: u64, len: usize) -> u8 {
        let k = self.fault_kinds(addr, len);
        if k & ERR_DECERR != 0 {
            resp::DECERR
        } else if k & ERR_SLVERR != 0 {
            resp::SLVERR
        } else {
            resp::OKAY
        }
    }

    /// Addresses of allocated pages' first bytes, ascending.
    pub fn pages(&self) -> Vec<u64> {
        let mut v: Vec<u64> = self.pages.keys().map(|k| k * PAGE_BYTES as u64).collect();
        v.sort_unstable();
        v
    }

    /// Address of the first byte where `self` and `other` differ, if any.
    pub fn first_difference(&self, other: &SparseMemory) -> Option<u64> {
        let zero = [0u8; PAGE_BYTES];
        let mut keys: Vec<u64> = self
            .pages
            .keys()
            .chain(other.pages.keys())
            .copied()
            .collect();
        keys.sort_unstable();
        keys.dedup();
        for k in keys {
            let a = self.pages.get(&k).map_or(&zero, |p| p);
            let b = other.pages.get(&k).map_or(&zero, |p| p);
            if let Some(i) = a.iter().zip(b.iter()).position(|(x, y)| x != y) {
                return Some(k * PAGE_BYTES as u64 + i as u64);
            }
        }
        None
    }
}

impl PartialEq for SparseMemory {
    fn eq(&self, other: &Self) -> bool {
        self.first_difference(other).is_none()
    }
}

impl Eq for SparseMemory {}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::Rng;

    /// Random writes and reads across page edges against a flat array.
    #[test]
    fn matches_a_flat_reference() {
        let mut rng = Rng::new(3);
        let base = (1u64 << 39) - 3 * PAGE_BYTES as u64;
        let mut flat = vec![0u8; 6 * PAGE_BYTES];
        let mut m = SparseMemory::new();
        for _ in 0..2000 {
            let off = rng.below(flat.len() as u64 - 1) as usize;
            let len = 1 + rng.below((flat.len() - off).min(700) as u64) as usize;
            if rng.chance(0.5) {
                let data: Vec<u8> = (0..len).map(|_| rng.bits(8) as u8).collect();
                m.write(base + off as u64, &data);
                flat[off..off + len].copy_from_slice(&data);
            } else {
                assert_eq!(m.read(base + off as u64, len), &flat[off..off + len]);
            }
        }
        assert_eq!(m.read(base, flat.len()), flat);
    }

    #[test]
    fn equality_treats_absent_pages_as_zero() {
        let mut a = SparseMemory::new();
        let b = SparseMemory::new();
        a.write(0x1234, &[0, 0, 0]);
        assert_eq!(a, b);
        a.write(0x5000 + 17, &[9]);
        assert_eq!(a.first_difference(&b), Some(0x5000 + 17));
        assert_eq!(b.first_difference(&a), Some(0x5000 + 17));
        assert_eq!(a.pages(), vec![0x1000, 0x5000]);
    }

    /// Faulty lines read as zero through the checked read, with their
    /// kinds; the write resp is the worst line's; OKAY clears a fault.
    #[test]
    fn faulty_lines_read_zero_and_report_their_kind() {
        let mut m = SparseMemory::new();
        m.write(0x100, &[0xAB; 64]);
        m.set_fault(0x115, resp::SLVERR);
        m.set_fault(0x130, resp::DECERR);
        let mut b = [0u8; 20];
        assert_eq!(m.read_checked_into(0x108, &mut b), ERR_SLVERR);
        assert_eq!(&b[..8], &[0xAB; 8]);
        assert_eq!(&b[8..], &[0; 12]);
        let mut b = [0u8; 64];
        assert_eq!(m.read_checked_into(0x100, &mut b), ERR_SLVERR | ERR_DECERR);
        assert_eq!(&b[..16], &[0xAB; 16]);
        assert_eq!(&b[16..32], &[0; 16]);
        assert_eq!(&b[32..48], &[0xAB; 16]);
        assert_eq!(&b[48..], &[0; 16]);
        assert_eq!(
            m.read(0x110, 4),
            vec![0xAB; 4],
            "the backdoor ignores faults"
        );
        assert_eq!(m.write_resp(0x100, 16), resp::OKAY);
        assert_eq!(m.write_resp(0x10F, 2), resp::SLVERR);
        assert_eq!(m.write_resp(0x110, 0x30), resp::DECERR);
        m.set_fault(0x130, resp::OKAY);
        assert_eq!(m.faults(), vec![(0x110, resp::SLVERR)]);
    }
}
