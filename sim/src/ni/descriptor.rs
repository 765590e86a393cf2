//! RDMA descriptors: the staging registers software fills and the checked
//! descriptor a DOORBELL queues.

use super::regs::{ChError, DescField};
use crate::packet::coords::{Coords, Field};

/// RDMA operation.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Op {
    /// Local memory -> remote memory.
    Write,
    /// Remote memory -> local memory (the remote NI sends the data).
    Read,
}

/// A queued RDMA descriptor.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Descriptor {
    /// Write or read.
    pub op: Op,
    /// Local address: source of a write, landing address of a read.
    pub laddr: u64,
    /// Remote address: landing address of a write, source of a read.
    pub raddr: u64,
    /// Bytes (>= 1).
    pub len: u32,
    /// Remote node.
    pub dest: Coords,
    /// Ask the landing node to send a completion notification back.
    pub notify: bool,
    /// Transaction id (14 bits), reported in completions.
    pub txid: u16,
}

/// The descriptor staging registers of one channel (raw, as written).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Staging {
    laddr_lo: u32,
    laddr_hi: u32,
    raddr_lo: u32,
    raddr_hi: u32,
    len: u32,
    dest: u32,
    ctrl: u32,
}

/// Bits DESC_CTRL keeps: op\[1:0\], notify\[4\], txid\[29:16\].
pub const CTRL_MASK: u32 = 0x3 | 1 << 4 | 0x3FFF << 16;

/// DESC_CTRL op code of an allreduce descriptor (with an allreduce engine;
/// without one it is refused BAD_OP like any other unknown op).
pub const OP_ALLREDUCE: u32 = 2;

/// DESC_CTRL \[1:0\]: the op (0 write, 1 read, 2 allreduce with an engine, others refused: BAD_OP).
pub const CTRL_OP: Field = Field {
    name: "op",
    offset: 0,
    width: 2,
};
/// DESC_CTRL bit 4: notify.
pub const CTRL_NOTIFY: Field = Field {
    name: "notify",
    offset: 4,
    width: 1,
};
/// DESC_CTRL \[29:16\]: the transaction id.
pub const CTRL_TXID: Field = Field {
    name: "txid",
    offset: 16,
    width: 14,
};

/// DESC_DEST \[3:0\] of an allreduce descriptor: the communicator slot.
pub const AR_DEST_COMM: Field = Field {
    name: "ar_comm",
    offset: 0,
    width: 4,
};
/// DESC_DEST \[6:4\] of an allreduce descriptor: the `reduce_alu` op code.
pub const AR_DEST_OP: Field = Field {
    name: "ar_op",
    offset: 4,
    width: 3,
};
/// DESC_DEST \[9:7\] of an allreduce descriptor: the `reduce_alu` dtype code.
pub const AR_DEST_DTYPE: Field = Field {
    name: "ar_dtype",
    offset: 7,
    width: 3,
};

impl Staging {
    /// Write a field; bits outside the field read back as zero.
    pub fn write(&mut self, f: DescField, v: u32) {
        match f {
            DescField::LaddrLo => self.laddr_lo = v,
            DescField::LaddrHi => self.laddr_hi = v & 0x3FF,
            DescField::RaddrLo => self.raddr_lo = v,
            DescField::RaddrHi => self.raddr_hi = v & 0x3FF,
            DescField::Len => self.len = v,
            DescField::Dest => self.dest = v & 0x3F_FFFF,
            DescField::Ctrl => self.ctrl = v & CTRL_MASK,
        }
    }

    /// Read a field back.
    pub fn read(&self, f: DescField) -> u32 {
        match f {
            DescField::LaddrLo => self.laddr_lo,
            DescField::LaddrHi => self.laddr_hi,
            DescField::RaddrLo => self.raddr_lo,
            DescField::RaddrHi => self.raddr_hi,
            DescField::Len => self.len,
            DescField::Dest => self.dest,
            DescField::Ctrl => self.ctrl,
        }
    }

    /// The descriptor a DOORBELL queues, checked in this order: op
    /// ([`ChError::BadOp`]), length ([`ChError::BadLen`]), addresses
    /// ([`ChError::BadAddr`]: local + len <= 2^addr_bits, remote + len <= 2^42).
    pub fn descriptor(&self, addr_bits: u32) -> Result<Descriptor, ChError> {
        let op = match self.ctrl & 3 {
            0 => Op::Write,
            1 => Op::Read,
            _ => return Err(ChError::BadOp),
        };
        if self.len == 0 {
            return Err(ChError::BadLen);
        }
        let laddr = (self.laddr_hi as u64) << 32 | self.laddr_lo as u64;
        let raddr = (self.raddr_hi as u64) << 32 | self.raddr_lo as u64;
        if laddr + self.len as u64 > 1 << addr_bits || raddr + self.len as u64 > 1 << 42 {
            return Err(ChError::BadAddr);
        }
        Ok(Descriptor {
            op,
            laddr,
            raddr,
            len: self.len,
            dest: Coords::from_bits(self.dest).expect("masked to 22 bits"),
            notify: self.ctrl >> 4 & 1 == 1,
            txid: (self.ctrl >> 16 & 0x3FFF) as u16,
        })
    }
}

impl Descriptor {
    /// The staging-register writes (field, value) that stage this descriptor.
    pub fn staging_writes(&self) -> [(DescField, u32); 7] {
        let op = match self.op {
            Op::Write => 0,
            Op::Read => 1,
        };
        [
            (DescField::LaddrLo, self.laddr as u32),
            (DescField::LaddrHi, (self.laddr >> 32) as u32),
            (DescField::RaddrLo, self.raddr as u32),
            (DescField::RaddrHi, (self.raddr >> 32) as u32),
            (DescField::Len, self.len),
            (DescField::Dest, self.dest.to_bits()),
            (
                DescField::Ctrl,
                op | (self.notify as u32) << 4 | (self.txid as u32 & 0x3FFF) << 16,
            ),
        ]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn staging_round_trip_and_checks() {
        let d = Descriptor {
            op: Op::Read,
            laddr: 0xFF_1234_5678,
            raddr: 0x3FF_0000_0001,
            len: 0x100,
            dest: Coords::new(7, 3, 1, 2).unwrap(),
            notify: true,
            txid: 0x2001,
        };
        let mut s = Staging::default();
        for (f, v) in d.staging_writes() {
            s.write(f, v);
        }
        assert_eq!(s.descriptor(40), Ok(d));
        s.write(DescField::Ctrl, 0xFFFF_FFFF);
        assert_eq!(s.read(DescField::Ctrl), CTRL_MASK);
        assert_eq!(s.descriptor(40), Err(ChError::BadOp));
        s.write(DescField::Ctrl, 0);
        s.write(DescField::Len, 0);
        assert_eq!(s.descriptor(40), Err(ChError::BadLen));
        s.write(DescField::Len, 0x1_0000);
        assert!(s.descriptor(40).is_ok());
        s.write(DescField::RaddrLo, 0xFFFF_FFF0);
        assert_eq!(
            s.descriptor(40),
            Err(ChError::BadAddr),
            "remote end beyond 2^42"
        );
        s.write(DescField::RaddrHi, 0);
        assert_eq!(s.descriptor(40).unwrap().len, 0x1_0000);
        s.write(DescField::LaddrHi, 0xFF);
        s.write(DescField::LaddrLo, 0xFFFF_0001);
        assert_eq!(
            s.descriptor(40),
            Err(ChError::BadAddr),
            "local end beyond 2^40"
        );
        assert!(s.descriptor(42).is_ok());
        s.write(DescField::Dest, u32::MAX);
        assert_eq!(s.read(DescField::Dest), 0x3F_FFFF);
    }
}
