//! Header flit (128 bits) and packet types.
//!
//! Layout, MSB first (ARCHITECTURE.md "Packet format"):
//!
//! | bits | field | meaning |
//! |---|---|---|
//! | \[127:112\] | `ecc` | \[119:112\] SECDED check bits over \[111:0\]; \[127:120\] reserved, sent 0, ignored on receipt |
//! | \[111:110\] | `fpga_offset` | FPGA offset (routing within a board) |
//! | \[109:107\] | `path` | path selector |
//! | \[106:104\] | `reserved` | reserved, carried unchanged |
//! | \[103:62\] | `vaddr` | destination virtual address (42 bits) |
//! | \[61:48\] | `size` | size in bytes |
//! | \[47:43\] | `ptype` | [`PacketType`] code |
//! | \[42:21\] | `dest` | destination [`Coords`] |
//! | \[20:5\] | `pdid` | protection domain id |
//! | \[4:0\] | `vc` | virtual channel |
//!
//! ECC: the 16-bit field holds an extended Hamming SECDED code over the 112
//! other bits ([`crate::common::secded`] with `data_bits = 112`: 7 Hamming
//! check bits + 1 overall parity = 8 bits, in ecc\[7:0\]); ecc\[15:8\] is
//! reserved. Why 8 and not a stronger 16-bit code: the header's threat is a
//! single upset in a buffer or register (links have their own CRC and
//! retransmission), SECDED decodes in one shallow XOR level inside the
//! router's 2-cycle header budget, while a double-error-correcting BCH code
//! (14+1 bits for 112 data bits) needs an error-locator solve that does not;
//! the reserved byte keeps room for one later without moving any field.

use super::coords::{Coords, Field};
use crate::common::secded::{EccStatus, SecdedCode, SecdedParams};
use anyhow::{anyhow, Result};
use std::fmt;
use std::sync::OnceLock;

/// Header width.
pub const HEADER_BITS: u32 = 128;
/// Bits protected by the ECC (\[111:0\]).
pub const HEADER_PROTECTED_BITS: u32 = 112;
/// SECDED check bits used within the 16-bit ecc field.
pub const HEADER_CHECK_BITS: u32 = 8;

/// ECC, bits \[127:112\].
pub const ECC: Field = Field {
    name: "ecc",
    offset: 112,
    width: 16,
};
/// FPGA offset, bits \[111:110\].
pub const FPGA_OFFSET: Field = Field {
    name: "fpga_offset",
    offset: 110,
    width: 2,
};
/// Path, bits \[109:107\].
pub const PATH: Field = Field {
    name: "path",
    offset: 107,
    width: 3,
};
/// Reserved, bits \[106:104\].
pub const RESERVED: Field = Field {
    name: "reserved",
    offset: 104,
    width: 3,
};
/// Destination virtual address, bits \[103:62\].
pub const VADDR: Field = Field {
    name: "vaddr",
    offset: 62,
    width: 42,
};
/// Size in bytes, bits \[61:48\].
pub const SIZE: Field = Field {
    name: "size",
    offset: 48,
    width: 14,
};
/// Packet type, bits \[47:43\].
pub const PTYPE: Field = Field {
    name: "ptype",
    offset: 43,
    width: 5,
};
/// Destination coordinates, bits \[42:21\].
pub const DEST: Field = Field {
    name: "dest",
    offset: 21,
    width: 22,
};
/// Protection domain id, bits \[20:5\].
pub const PDID: Field = Field {
    name: "pdid",
    offset: 5,
    width: 16,
};
/// Virtual channel, bits \[4:0\].
pub const VC: Field = Field {
    name: "vc",
    offset: 0,
    width: 5,
};
/// Every field, MSB first.
pub const FIELDS: [Field; 10] = [
    ECC,
    FPGA_OFFSET,
    PATH,
    RESERVED,
    VADDR,
    SIZE,
    PTYPE,
    DEST,
    PDID,
    VC,
];

/// Packet types with their 5-bit codes. Bit 4 of the code is the priority
/// class: 0 = requests (data movement a node starts), 1 = responses
/// (anything a node sends *because* it received a packet). Keeping
/// responses in their own, higher class means consuming a response never
/// waits for a request to drain, which breaks request–response deadlock;
/// the router reads the class straight from `ptype[4]`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[repr(u8)]
pub enum PacketType {
    /// RDMA write: payload goes to `vaddr` at the destination.
    RdmaWrite = 0x01,
    /// RDMA read request: asks the destination to send data back.
    RdmaReadReq = 0x02,
    /// Packetizer message: payload goes to the destination's mailbox.
    Mailbox = 0x03,
    /// One fragment of an allreduce step.
    AllreduceFragment = 0x04,
    /// RDMA read response: the data of a read request.
    RdmaReadResp = 0x10,
    /// RDMA completion notification: the last byte of a transfer landed.
    RdmaCompletion = 0x11,
    /// Generic positive acknowledgement.
    Ack = 0x12,
    /// Generic negative acknowledgement (e.g. protection check failed).
    Nack = 0x13,
    /// The mailbox accepted a message.
    MailboxAck = 0x14,
    /// The mailbox was full and refused a message.
    MailboxNack = 0x15,
}

impl PacketType {
    /// Every type, in code order.
    pub const ALL: [PacketType; 10] = [
        PacketType::RdmaWrite,
        PacketType::RdmaReadReq,
        PacketType::Mailbox,
        PacketType::AllreduceFragment,
        PacketType::RdmaReadResp,
        PacketType::RdmaCompletion,
        PacketType::Ack,
        PacketType::Nack,
        PacketType::MailboxAck,
        PacketType::MailboxNack,
    ];

    /// The 5-bit code.
    pub fn code(self) -> u8 {
        self as u8
    }

    /// The type of a code; an unknown code is an error, never a panic.
    pub fn from_code(code: u8) -> Result<Self> {
        PacketType::ALL
            .iter()
            .copied()
            .find(|t| t.code() == code)
            .ok_or_else(|| anyhow!(HeaderError::UnknownType { code }))
    }

    /// Message class: 1 (high priority) for the control responses
    /// (RdmaCompletion, Ack, Nack, MailboxAck, MailboxNack: no payload,
    /// consumed without sending anything), 0 for requests and data,
    /// read-response data included. Why read data is class 0: a read
    /// request never waits for room in the read queue (a full queue answers
    /// it with a class-1 Nack, [`crate::ni::rdma_rx::NACK_READ_BUSY`]), so
    /// class 0 waits only for class 1 (the response queue) and software
    /// (the completion queue), and class 1 only for software: no cycle.
    pub fn class(self) -> usize {
        match self {
            PacketType::RdmaCompletion
            | PacketType::Ack
            | PacketType::Nack
            | PacketType::MailboxAck
            | PacketType::MailboxNack => 1,
            _ => 0,
        }
    }

    /// Control/acknowledgement/response type, carried in the high-priority class.
    pub fn is_high_priority(self) -> bool {
        self.class() == 1
    }
}

/// Why a header word was rejected. Carried inside `anyhow::Error`; match
/// with `err.downcast_ref::<HeaderError>()`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HeaderError {
    /// The ECC found an uncorrectable (double) error.
    Uncorrectable {
        /// Received word.
        word: u128,
    },
    /// The (corrected) type code names no [`PacketType`].
    UnknownType {
        /// Received code.
        code: u8,
    },
}

impl fmt::Display for HeaderError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            HeaderError::Uncorrectable { word } => {
                write!(f, "header 0x{word:032x}: uncorrectable ECC error")
            }
            HeaderError::UnknownType { code } => {
                write!(f, "field `ptype` = 0x{code:02x} is not a known packet type")
            }
        }
    }
}

impl std::error::Error for HeaderError {}

fn code() -> &'static SecdedCode {
    static CODE: OnceLock<SecdedCode> = OnceLock::new();
    CODE.get_or_init(|| {
        SecdedCode::new(&SecdedParams {
            data_bits: HEADER_PROTECTED_BITS as usize,
        })
        .expect("112 data bits is a valid SECDED width")
    })
}

/// The 16-bit ecc field for the protected bits \[111:0\] of `word`.
pub fn header_ecc(word: u128) -> u16 {
    code().encode(word & ((1u128 << HEADER_PROTECTED_BITS) - 1))
}

/// A decoded header.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Header {
    fpga_offset: u8,
    path: u8,
    reserved: u8,
    vaddr: u64,
    size: u16,
    ptype: PacketType,
    dest: Coords,
    pdid: u16,
    vc: u8,
}

impl Header {
    /// A header of type `ptype` to `dest`, every other field zero.
    pub fn new(ptype: PacketType, dest: Coords) -> Self {
        Header {
            fpga_offset: 0,
            path: 0,
            reserved: 0,
            vaddr: 0,
            size: 0,
            ptype,
            dest,
            pdid: 0,
            vc: 0,
        }
    }

    setter!(
        /// FPGA offset.
        set_fpga_offset, fpga_offset, fpga_offset, u8, FPGA_OFFSET);
    setter!(
        /// Path selector.
        set_path, path, path, u8, PATH);
    setter!(
        /// Reserved bits.
        set_reserved, reserved, reserved, u8, RESERVED);
    setter!(
        /// Destination virtual address.
        set_vaddr, vaddr, vaddr, u64, VADDR);
    setter!(
        /// Size in bytes.
        set_size, size, size, u16, SIZE);
    setter!(
        /// Protection domain id.
        set_pdid, pdid, pdid, u16, PDID);
    setter!(
        /// Virtual channel.
        set_vc, vc, vc, u8, VC);

    /// Packet type.
    pub fn ptype(&self) -> PacketType {
        self.ptype
    }
    /// Set the packet type.
    pub fn set_ptype(&mut self, t: PacketType) -> &mut Self {
        self.ptype = t;
        self
    }
    /// Destination coordinates.
    pub fn dest(&self) -> Coords {
        self.dest
    }
    /// Set the destination.
    pub fn set_dest(&mut self, c: Coords) -> &mut Self {
        self.dest = c;
        self
    }

    /// The 128-bit header word with its ECC.
    pub fn to_bits(&self) -> u128 {
        let mut w = 0u128;
        w = FPGA_OFFSET.put(w, self.fpga_offset as u64);
        w = PATH.put(w, self.path as u64);
        w = RESERVED.put(w, self.reserved as u64);
        w = VADDR.put(w, self.vaddr);
        w = SIZE.put(w, self.size as u64);
        w = PTYPE.put(w, self.ptype.code() as u64);
        w = DEST.put(w, self.dest.to_bits() as u64);
        w = PDID.put(w, self.pdid as u64);
        w = VC.put(w, self.vc as u64);
        ECC.put(w, header_ecc(w) as u64)
    }

    /// Decode a header word: check and correct the ECC, then the fields.
    /// Errors ([`HeaderError`]): uncorrectable ECC, unknown packet type.
    pub fn decode(word: u128) -> Result<(Header, EccStatus)> {
        let body = word & ((1u128 << HEADER_PROTECTED_BITS) - 1);
        let check = (ECC.get(word) as u16) & ((1 << HEADER_CHECK_BITS) - 1);
        let d = code().decode(body, check);
        if d.double() {
            return Err(anyhow!(HeaderError::Uncorrectable { word }));
        }
        let w = d.data;
        let ptype = PacketType::from_code(PTYPE.get(w) as u8)?;
        let h = Header {
            fpga_offset: FPGA_OFFSET.get(w) as u8,
            path: PATH.get(w) as u8,
            reserved: RESERVED.get(w) as u8,
            vaddr: VADDR.get(w),
            size: SIZE.get(w) as u16,
            ptype,
            dest: Coords::from_bits(DEST.get(w) as u32)?,
            pdid: PDID.get(w) as u16,
            vc: VC.get(w) as u8,
        };
        Ok((h, d.status))
    }

    /// [`Header::decode`] without the ECC status (single errors corrected silently).
    pub fn from_bits(word: u128) -> Result<Header> {
        Header::decode(word).map(|(h, _)| h)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::common::secded::CodeBit;
    use crate::packet::coords::check_tiling;

    #[test]
    fn fields_tile_the_word() {
        check_tiling(&FIELDS, HEADER_BITS).unwrap();
        let protected: u32 = FIELDS[1..].iter().map(|f| f.width).sum();
        assert_eq!(protected, HEADER_PROTECTED_BITS);
    }

    #[test]
    fn type_codes_round_trip_and_unknown_codes_error() {
        for t in PacketType::ALL {
            assert_eq!(PacketType::from_code(t.code()).unwrap(), t);
            assert!(t.code() < 32);
        }
        let known: Vec<u8> = PacketType::ALL.iter().map(|t| t.code()).collect();
        for c in 0..=255u8 {
            if !known.contains(&c) {
                let e = PacketType::from_code(c).unwrap_err();
                assert_eq!(
                    e.downcast_ref::<HeaderError>(),
                    Some(&HeaderError::UnknownType { code: c })
                );
            }
        }
        assert!(PacketType::MailboxAck.is_high_priority());
        assert!(PacketType::RdmaCompletion.is_high_priority());
        assert!(!PacketType::RdmaWrite.is_high_priority());
        assert_eq!(PacketType::Mailbox.class(), 0);
    }

    #[test]
    fn setters_reject_out_of_range_naming_the_field() {
        let mut h = Header::new(PacketType::RdmaWrite, Coords::default());
        let e = h.set_size(1 << 14).unwrap_err().to_string();
        assert!(e.contains("`size`"), "{e}");
        let e = h.set_vaddr(1 << 42).unwrap_err().to_string();
        assert!(e.contains("`vaddr`"), "{e}");
        let e = h.set_vc(32).unwrap_err().to_string();
        assert!(e.contains("`vc`"), "{e}");
        assert!(h.set_size((1 << 14) - 1).is_ok());
    }

    #[test]
    fn single_errors_are_corrected_and_reported() {
        let mut h = Header::new(PacketType::Mailbox, Coords::new(1, 2, 3, 1).unwrap());
        h.set_vaddr(0x2_0000_1234).unwrap().set_size(256).unwrap();
        let w = h.to_bits();
        assert_eq!(Header::decode(w).unwrap(), (h, EccStatus::Clean));
        for bit in 0..120 {
            let (g, st) = Header::decode(w ^ (1u128 << bit)).unwrap();
            assert_eq!(g, h, "bit {bit}");
            let want = if bit < 112 {
                CodeBit::Data(bit)
            } else {
                CodeBit::Check(bit - 112)
            };
            assert_eq!(st, EccStatus::Corrected(want));
        }
        // Reserved ecc byte: not protected, ignored.
        assert_eq!(
            Header::decode(w ^ (1u128 << 127)).unwrap().1,
            EccStatus::Clean
        );
        let e = Header::decode(w ^ 0b11 << 60).unwrap_err();
        assert!(matches!(
            e.downcast_ref::<HeaderError>(),
            Some(HeaderError::Uncorrectable { .. })
        ));
    }
}
