//! Input buffers: one FIFO of `buffer_flits` flits per (input port, VC), in
//! flat fixed-size storage (the flit data words, then one head/tail byte).

use super::flit::Flit;
use crate::topology::MAX_PORTS;

const HEAD: u8 = 1;
const TAIL: u8 = 2;

/// All input VC buffers of one router.
#[derive(Clone, Debug)]
pub struct InputBuffers {
    depth: usize,
    words: usize,
    vcs: usize,
    data: Vec<u64>,
    meta: Vec<u8>,
    /// Per FIFO: (read index, count), together for locality.
    q: Vec<(u16, u16)>,
    /// Per port, bit v set when VC v holds at least one flit.
    nonempty: [u32; MAX_PORTS],
}

impl InputBuffers {
    /// Empty buffers for `ports` x `vcs` FIFOs of `depth` flits of `words` 64-bit words.
    pub fn new(ports: usize, vcs: usize, depth: usize, words: usize) -> Self {
        let n = ports * vcs;
        InputBuffers {
            depth,
            words,
            vcs,
            data: vec![0; n * depth * words],
            meta: vec![0; n * depth],
            q: vec![(0, 0); n],
            nonempty: [0; MAX_PORTS],
        }
    }

    #[inline]
    fn qi(&self, port: usize, vc: usize) -> usize {
        port * self.vcs + vc
    }

    /// Flits held by (port, vc).
    #[inline]
    pub fn count(&self, port: usize, vc: usize) -> usize {
        self.q[self.qi(port, vc)].1 as usize
    }

    /// Bit mask of the VCs of `port` that hold flits.
    #[inline]
    pub fn nonempty(&self, port: usize) -> u32 {
        self.nonempty[port]
    }

    /// Whether any VC of any port holds a flit.
    #[inline]
    pub fn any(&self) -> bool {
        self.nonempty.iter().any(|&m| m != 0)
    }

    /// Total flits held.
    pub fn total(&self) -> usize {
        self.q.iter().map(|&(_, c)| c as usize).sum()
    }

    #[inline]
    fn slot(&self, port: usize, vc: usize, i: usize) -> usize {
        // i < depth and rd < depth, so one conditional subtraction wraps
        let q = self.qi(port, vc);
        let j = self.q[q].0 as usize + i;
        q * self.depth + if j >= self.depth { j - self.depth } else { j }
    }

    /// Head/tail bits of the `i`-th flit from the front (`i < count`).
    #[inline]
    pub fn head_tail(&self, port: usize, vc: usize, i: usize) -> (bool, bool) {
        let m = self.meta[self.slot(port, vc, i)];
        (m & HEAD != 0, m & TAIL != 0)
    }

    /// Data word `w` of the `i`-th flit from the front.
    #[inline]
    pub fn word(&self, port: usize, vc: usize, i: usize, w: usize) -> u64 {
        self.data[self.slot(port, vc, i) * self.words + w]
    }

    /// The `i`-th flit from the front, with `vc` in the sideband.
    pub fn peek(&self, port: usize, vc: usize, i: usize) -> Flit {
        let s = self.slot(port, vc, i);
        let mut f = Flit {
            vc: vc as u8,
            head: self.meta[s] & HEAD != 0,
            tail: self.meta[s] & TAIL != 0,
            ..Default::default()
        };
        let d = &self.data[s * self.words..(s + 1) * self.words];
        // fixed-size copies: a runtime-length copy_from_slice becomes a memmove call
        match *d {
            [a] => f.data[0] = a,
            [a, b] => (f.data[0], f.data[1]) = (a, b),
            [a, b, c, e] => f.data = [a, b, c, e],
            _ => unreachable!("flit words are 1, 2 or 4"),
        }
        f
    }

    /// Append a flit; `false` (and nothing stored) when the FIFO is full.
    #[inline]
    pub fn push(&mut self, port: usize, vc: usize, f: &Flit) -> bool {
        let q = self.qi(port, vc);
        let n = self.q[q].1 as usize;
        if n == self.depth {
            return false;
        }
        let s = self.slot(port, vc, n);
        let w = self.words;
        for (i, d) in self.data[s * w..(s + 1) * w].iter_mut().enumerate() {
            *d = f.data[i];
        }
        self.meta[s] = (u8::from(f.head) * HEAD) | (u8::from(f.tail) * TAIL);
        self.q[q].1 += 1;
        self.nonempty[port] |= 1 << vc;
        true
    }

    /// Remove the front flit (the FIFO must not be empty) and return it.
    #[inline]
    pub fn pop(&mut self, port: usize, vc: usize) -> Flit {
        let f = self.peek(port, vc, 0);
        let q = self.qi(port, vc);
        let e = &mut self.q[q];
        e.0 = if e.0 as usize + 1 == self.depth {
            0
        } else {
            e.0 + 1
        };
        e.1 -= 1;
        if e.1 == 0 {
            self.nonempty[port] &= !(1 << vc);
        }
        f
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fifo_order_wraps_and_full() {
        let mut b = InputBuffers::new(2, 3, 4, 2);
        let f = |i: u64| Flit {
            data: [i, !i, 0, 0],
            head: i.is_multiple_of(3),
            tail: i % 3 == 2,
            vc: 0,
        };
        let mut next_in = 0;
        let mut next_out = 0;
        for round in 0..10 {
            while b.push(1, 2, &f(next_in)) {
                next_in += 1;
            }
            assert_eq!(b.count(1, 2), 4);
            assert_eq!(b.nonempty(1), 0b100);
            for _ in 0..(1 + round % 4) {
                let mut g = b.pop(1, 2);
                assert_eq!(g.vc, 2);
                g.vc = 0;
                assert_eq!(g, f(next_out));
                next_out += 1;
            }
        }
        while b.count(1, 2) > 0 {
            b.pop(1, 2);
        }
        assert_eq!(b.nonempty(1), 0);
        assert!(!b.any());
    }
}
