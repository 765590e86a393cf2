//! Receive path checks: decode a packet and decide, without side effects,
//! whether it is accepted (and as what) or rejected (and why).
//!
//! Checks, in order; the first that fails names the reason:
//! 1. at least two words, else `Format` (nothing trusted);
//! 2. header SECDED: uncorrectable -> `HeaderEcc`; single error corrected
//!    (counted) and the corrected header used; unknown type -> `HeaderType`;
//! 3. footer CRC-8 -> `FooterCrc`;
//!    (the footer is decoded even when the header failed, and the header
//!    even when the footer failed: the error entry keeps what is trusted);
//! 4. word count `== 2 + ceil(size / 16)` -> `Format`;
//! 5. header `dest` is this node (all 22 bits) -> `Misrouted`;
//! 6. the type's message class ([`PacketType::class`]) is the class of the
//!    VC the packet arrived on ([`RxContext::arrival_class`]) ->
//!    `WrongClass`;
//! 7. payload CRC-32 over the `size` payload bytes -> `PayloadCrc`;
//! 8. type rules -> `Unsupported` (Ack, and AllreduceFragment without an
//!    allreduce engine) or `Format`:
//!    - AllreduceFragment (with an engine): `1 <= size <= P`; the engine
//!      checks the rest ([`crate::allreduce::engine`]), no window check;
//!    - RdmaWrite, RdmaReadResp: `1 <= size <= P` and the bytes do not cross
//!      a `P` boundary (`vaddr mod P + size <= P`);
//!    - RdmaReadReq: `first = last = 1`, `seq = 0`, a well-formed
//!      [`ReadRequest`] payload;
//!    - Mailbox: `first = last = 1`, `seq = 0`, `1 <= size <= mailbox_msg_bytes`;
//!    - RdmaCompletion, Nack, MailboxAck, MailboxNack: `first = last = 1`,
//!      `seq = 0`, `size = 0`, and `flags` a status code 0..=2 or 5
//!      MEM_ERROR (RdmaCompletion), a reject reason code or [`NACK_READ_BUSY`] (Nack),
//!      0 (MailboxAck), 0 or a reject reason code (MailboxNack);
//! 9. protection -> `Window` / `Pdid`: data packets `[vaddr, +size)`, read
//!    requests `[vaddr, +len)` against the windows with the header PDID;
//!    mailbox messages against MBOX_CTRL;
//! 10. (in `ni.rs`, needs packetizer state) MailboxAck/MailboxNack must name
//!     a slot awaiting an ack, from the message's destination, with its PDID
//!     -> `Stale`.

use super::completion::CqStatus;
use super::errors::RejectReason;
use super::packetizer::NACK_FULL;
use super::protection::{check_access, check_mailbox, Window};
use super::rdma_tx::ReadRequest;
use super::wire::{payload_words, Packet};
use crate::common::crc32::crc32;
use crate::common::secded::EccStatus;
use crate::packet::coords::Coords;
use crate::packet::footer::Footer;
use crate::packet::header::{Header, HeaderError, PacketType};

/// What the receive path needs to know of the node's configuration.
#[derive(Clone, Copy, Debug)]
pub struct RxContext<'a> {
    /// This node.
    pub me: Coords,
    /// `max_payload_bytes`.
    pub max_payload: usize,
    /// `mailbox_msg_bytes`.
    pub mailbox_msg_bytes: usize,
    /// `addr_bits`.
    pub addr_bits: u32,
    /// Receive windows.
    pub windows: &'a [Window],
    /// MBOX_CTRL.OPEN.
    pub mailbox_open: bool,
    /// MBOX_CTRL.PDID.
    pub mailbox_pdid: u16,
    /// Message class of the VC the packet arrived on (`vc / vcs_per_class`
    /// at the NI's network port): 0 requests and data, 1 control
    /// responses. A packet whose type belongs to the other class is
    /// rejected `WrongClass`.
    pub arrival_class: usize,
    /// The NI has an allreduce engine (fragments are its, not `Unsupported`).
    pub allreduce: bool,
}

/// An accepted packet, by what it asks for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Accepted {
    /// RdmaWrite or RdmaReadResp: write `payload` at `header.vaddr()`.
    Data {
        /// Header.
        header: Header,
        /// Footer.
        footer: Footer,
        /// The `size` bytes.
        payload: Vec<u8>,
    },
    /// RdmaReadReq: serve `req` from `header.vaddr()`.
    ReadReq {
        /// Header.
        header: Header,
        /// Footer.
        footer: Footer,
        /// Parsed payload.
        req: ReadRequest,
    },
    /// Packetizer message for the mailbox.
    Mailbox {
        /// Header.
        header: Header,
        /// Footer.
        footer: Footer,
        /// Message bytes.
        payload: Vec<u8>,
    },
    /// AllreduceFragment, for the allreduce engine (which checks the rest).
    Fragment {
        /// Header.
        header: Header,
        /// Footer.
        footer: Footer,
        /// The `size` bytes.
        payload: Vec<u8>,
    },
    /// RdmaCompletion (notification), Nack (read refused), MailboxAck,
    /// MailboxNack: header and footer say everything.
    Response {
        /// Header.
        header: Header,
        /// Footer.
        footer: Footer,
    },
}

impl Accepted {
    /// The packet's header (corrected, when its ECC corrected a bit).
    pub fn header(&self) -> &Header {
        match self {
            Accepted::Data { header, .. } => header,
            Accepted::ReadReq { header, .. } => header,
            Accepted::Mailbox { header, .. } => header,
            Accepted::Fragment { header, .. } => header,
            Accepted::Response { header, .. } => header,
        }
    }
}

/// A rejected packet and what of it can be trusted.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Rejected {
    /// Why.
    pub reason: RejectReason,
    /// Header, when its ECC and type were good.
    pub header: Option<Header>,
    /// Footer, when its CRC-8 was good.
    pub footer: Option<Footer>,
}

/// Result of the checks.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Checked {
    /// The header ECC corrected a single-bit error.
    pub corrected: bool,
    /// Accepted or rejected.
    pub result: Result<Accepted, Rejected>,
}

fn single(footer: &Footer) -> bool {
    footer.first() && footer.last() && footer.seq() == 0
}

/// Run checks 1..=9 on `p`.
pub fn check(p: &Packet, ctx: &RxContext) -> Checked {
    let reject = |reason, header, footer| {
        Err(Rejected {
            reason,
            header,
            footer,
        })
    };
    if p.words.len() < 2 {
        return Checked {
            corrected: false,
            result: reject(RejectReason::Format, None, None),
        };
    }
    let footer = Footer::from_bits(p.footer_word()).ok();
    let (header, corrected) = match Header::decode(p.header_word()) {
        Ok((h, st)) => (h, matches!(st, EccStatus::Corrected(_))),
        Err(e) => {
            let reason = match e.downcast_ref::<HeaderError>() {
                Some(HeaderError::UnknownType { .. }) => RejectReason::HeaderType,
                _ => RejectReason::HeaderEcc,
            };
            return Checked {
                corrected: false,
                result: reject(reason, None, footer),
            };
        }
    };
    let result = check_body(p, ctx, header, footer);
    Checked { corrected, result }
}

fn check_body(
    p: &Packet,
    ctx: &RxContext,
    header: Header,
    footer: Option<Footer>,
) -> Result<Accepted, Rejected> {
    let Some(footer) = footer else {
        return Err(Rejected {
            reason: RejectReason::FooterCrc,
            header: Some(header),
            footer: None,
        });
    };
    let rej = |reason| Rejected {
        reason,
        header: Some(header),
        footer: Some(footer),
    };
    let size = header.size() as usize;
    if p.words.len() != 2 + payload_words(size) {
        return Err(rej(RejectReason::Format));
    }
    if header.dest() != ctx.me {
        return Err(rej(RejectReason::Misrouted));
    }
    if header.ptype().class() != ctx.arrival_class {
        return Err(rej(RejectReason::WrongClass));
    }
    let payload = p.payload_bytes(size);
    if crc32(&payload) != footer.payload_crc() {
        return Err(rej(RejectReason::PayloadCrc));
    }
    let pm = ctx.max_payload as u64;
    match header.ptype() {
        PacketType::RdmaWrite | PacketType::RdmaReadResp => {
            if size == 0 || size > ctx.max_payload || header.vaddr() % pm + size as u64 > pm {
                return Err(rej(RejectReason::Format));
            }
            check_access(
                ctx.windows,
                header.vaddr(),
                size as u64,
                header.pdid(),
                ctx.addr_bits,
            )
            .map_err(rej)?;
            Ok(Accepted::Data {
                header,
                footer,
                payload,
            })
        }
        PacketType::RdmaReadReq => {
            let Some(req) = ReadRequest::from_payload(&payload).filter(|_| single(&footer)) else {
                return Err(rej(RejectReason::Format));
            };
            check_access(
                ctx.windows,
                header.vaddr(),
                req.len as u64,
                header.pdid(),
                ctx.addr_bits,
            )
            .map_err(rej)?;
            Ok(Accepted::ReadReq {
                header,
                footer,
                req,
            })
        }
        PacketType::Mailbox => {
            if !single(&footer) || size == 0 || size > ctx.mailbox_msg_bytes {
                return Err(rej(RejectReason::Format));
            }
            check_mailbox(ctx.mailbox_open, ctx.mailbox_pdid, header.pdid()).map_err(rej)?;
            Ok(Accepted::Mailbox {
                header,
                footer,
                payload,
            })
        }
        PacketType::RdmaCompletion
        | PacketType::Nack
        | PacketType::MailboxAck
        | PacketType::MailboxNack => {
            let flags = footer.flags();
            let flags_ok = match header.ptype() {
                PacketType::RdmaCompletion => {
                    flags <= CqStatus::Untracked as u8 || flags == CqStatus::MemError as u8
                }
                PacketType::Nack => {
                    flags == NACK_READ_BUSY || RejectReason::from_code(flags).is_some()
                }
                PacketType::MailboxAck => flags == 0,
                _ => flags == NACK_FULL || RejectReason::from_code(flags).is_some(),
            };
            if !single(&footer) || size != 0 || !flags_ok {
                return Err(rej(RejectReason::Format));
            }
            Ok(Accepted::Response { header, footer })
        }
        PacketType::AllreduceFragment if ctx.allreduce => {
            if size == 0 || size > ctx.max_payload {
                return Err(rej(RejectReason::Format));
            }
            Ok(Accepted::Fragment {
                header,
                footer,
                payload,
            })
        }
        PacketType::Ack | PacketType::AllreduceFragment => Err(rej(RejectReason::Unsupported)),
    }
}

/// Nack flags of a read request refused because the read queue was full
/// (not a rejection: nothing is counted as an error; the requester's
/// READ_DONE / REMOTE_DENIED entry carries it as its reason, and software
/// may ask again).
pub const NACK_READ_BUSY: u8 = RejectReason::MAX_CODE + 1;

/// A response packet (no payload) of type `ptype` from `me` to `dest`:
/// PDID, txid and flags as given, `first = last = 1`, every other field 0.
pub fn response_packet(
    ptype: PacketType,
    me: Coords,
    dest: Coords,
    pdid: u16,
    txid: u16,
    flags: u8,
) -> Packet {
    let mut h = Header::new(ptype, dest);
    h.set_pdid(pdid).expect("16-bit PDID");
    let mut f = Footer::new(me);
    f.set_txid(txid)
        .expect("14-bit txid")
        .set_flags(flags)
        .expect("8-bit flags");
    f.set_first(true).set_last(true);
    Packet::build(h, f, &[])
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ni::rdma_tx::read_request_packet;

    fn ctx(windows: &[Window]) -> RxContext<'_> {
        RxContext {
            me: Coords::new(1, 1, 0, 0).unwrap(),
            max_payload: 256,
            mailbox_msg_bytes: 64,
            addr_bits: 40,
            windows,
            mailbox_open: false,
            mailbox_pdid: 3,
            arrival_class: 0,
            allreduce: false,
        }
    }

    fn write(vaddr: u64, n: usize, pdid: u16) -> Packet {
        let mut h = Header::new(PacketType::RdmaWrite, Coords::new(1, 1, 0, 0).unwrap());
        h.set_vaddr(vaddr).unwrap().set_pdid(pdid).unwrap();
        let mut f = Footer::new(Coords::new(2, 0, 0, 0).unwrap());
        f.set_first(true).set_last(true);
        Packet::build(h, f, &vec![0xA5; n])
    }

    fn reason(p: &Packet, c: &RxContext) -> Option<RejectReason> {
        check(p, c).result.err().map(|r| r.reason)
    }

    #[test]
    fn check_order_and_reasons() {
        let w = [Window {
            base: 0x1000,
            size: 0x1000,
            pdid: 3,
            enabled: true,
        }];
        let c = ctx(&w);
        let good = write(0x1100, 100, 3);
        assert!(matches!(check(&good, &c).result, Ok(Accepted::Data { .. })));
        assert_eq!(reason(&write(0x1100, 100, 4), &c), Some(RejectReason::Pdid));
        assert_eq!(
            reason(&write(0x0F80, 100, 3), &c),
            Some(RejectReason::Window)
        );
        assert_eq!(
            reason(&write(0x10F0, 32, 3), &c),
            Some(RejectReason::Format),
            "crosses 256"
        );
        assert_eq!(reason(&write(0x1100, 0, 3), &c), Some(RejectReason::Format));

        let mut bad = good.clone();
        bad.words[2] ^= 1 << 77;
        assert_eq!(reason(&bad, &c), Some(RejectReason::PayloadCrc));
        let mut bad = good.clone();
        bad.words[0] ^= 0b11 << 70;
        let r = check(&bad, &c).result.unwrap_err();
        assert_eq!(
            (r.reason, r.header.is_none(), r.footer.is_some()),
            (RejectReason::HeaderEcc, true, true)
        );
        let mut one = good.clone();
        one.words[0] ^= 1 << 70;
        let k = check(&one, &c);
        assert!(k.corrected && k.result.is_ok());
        let mut bad = good.clone();
        let last = bad.words.len() - 1;
        bad.words[last] ^= 1 << 3;
        let r = check(&bad, &c).result.unwrap_err();
        assert_eq!(
            (r.reason, r.header.is_some(), r.footer.is_none()),
            (RejectReason::FooterCrc, true, true)
        );
        let mut bad = good.clone();
        bad.words.pop();
        assert_eq!(
            reason(&bad, &c),
            Some(RejectReason::FooterCrc),
            "payload word taken as footer"
        );
        let mut bad = good.clone();
        bad.words.remove(1);
        assert_eq!(reason(&bad, &c), Some(RejectReason::Format), "word count");
        assert_eq!(
            reason(&Packet { words: vec![0] }, &c),
            Some(RejectReason::Format)
        );
        let mut c2 = c;
        c2.me = Coords::new(1, 1, 0, 1).unwrap();
        assert_eq!(reason(&good, &c2), Some(RejectReason::Misrouted));

        // The arrival class: checked after the destination, before the
        // payload CRC.
        let mut c1 = c;
        c1.arrival_class = 1;
        assert_eq!(reason(&good, &c1), Some(RejectReason::WrongClass));
        assert_eq!(
            reason(&good, &RxContext { me: c2.me, ..c1 }),
            Some(RejectReason::Misrouted),
            "destination first"
        );
        let mut bad = good.clone();
        bad.words[2] ^= 1 << 77;
        assert_eq!(
            reason(&bad, &c1),
            Some(RejectReason::WrongClass),
            "class before payload CRC"
        );
        let mut bad = good.clone();
        bad.words.remove(1);
        assert_eq!(
            reason(&bad, &c1),
            Some(RejectReason::Format),
            "word count first"
        );
    }

    #[test]
    fn type_rules() {
        let w = [Window {
            base: 0,
            size: 1 << 20,
            pdid: 3,
            enabled: true,
        }];
        let c = ctx(&w);
        let me = c.me;
        let src = Coords::new(0, 0, 0, 0).unwrap();
        let req = ReadRequest {
            land: 0x40,
            len: 0x100,
        };
        let rq = read_request_packet(src, me, 0x200, req, 3, 1, false);
        assert!(matches!(check(&rq, &c).result, Ok(Accepted::ReadReq { req: r, .. }) if r == req));
        let rq = read_request_packet(src, me, (1 << 20) - 0x80, req, 3, 1, false);
        assert_eq!(
            reason(&rq, &c),
            Some(RejectReason::Window),
            "source range leaves the window"
        );

        assert_eq!(
            reason(
                &rq,
                &RxContext {
                    arrival_class: 1,
                    ..c
                }
            ),
            Some(RejectReason::WrongClass),
            "a request on a class-1 VC"
        );

        // Control responses travel on class 1.
        let c = RxContext {
            arrival_class: 1,
            ..c
        };
        let resp = response_packet(PacketType::MailboxAck, src, me, 3, 9, 0);
        assert!(matches!(
            check(&resp, &c).result,
            Ok(Accepted::Response { .. })
        ));
        assert_eq!(
            reason(
                &resp,
                &RxContext {
                    arrival_class: 0,
                    ..c
                }
            ),
            Some(RejectReason::WrongClass),
            "a response on a class-0 VC"
        );
        let ack = response_packet(PacketType::Ack, src, me, 3, 9, 0);
        assert_eq!(reason(&ack, &c), Some(RejectReason::Unsupported));
        for (flags, ok) in [
            (NACK_READ_BUSY, true),
            (RejectReason::MAX_CODE, true),
            (NACK_READ_BUSY + 1, false),
            (0, false),
        ] {
            let nack = response_packet(PacketType::Nack, src, me, 3, 9, flags);
            assert_eq!(check(&nack, &c).result.is_ok(), ok, "Nack flags {flags}");
        }
        let c = RxContext {
            arrival_class: 0,
            ..c
        };

        let msg = |n: usize, pdid: u16| {
            let mut h = Header::new(PacketType::Mailbox, me);
            h.set_pdid(pdid).unwrap();
            let mut f = Footer::new(src);
            f.set_first(true).set_last(true);
            Packet::build(h, f, &vec![1; n])
        };
        assert!(matches!(
            check(&msg(64, 3), &c).result,
            Ok(Accepted::Mailbox { .. })
        ));
        assert_eq!(reason(&msg(65, 3), &c), Some(RejectReason::Format));
        assert_eq!(reason(&msg(8, 4), &c), Some(RejectReason::Pdid));
        let mut open = c;
        open.mailbox_open = true;
        assert!(check(&msg(8, 4), &open).result.is_ok());
    }
}
