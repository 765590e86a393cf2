//! Sparse byte-addressed memory: the node's DRAM as the NI's AXI4 master sees it.
//!
//! Pages of 4 KiB are allocated on first write; bytes never written read as
//! zero. Two memories are equal when every byte is equal (an absent page
//! equals a page of zeros).

use std::collections::HashMap;

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
}
