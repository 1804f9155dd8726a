import ParlorProtocol

/// What a room's rules leave to the cluster part of the rooms service: recording a member's attachment across
/// nodes, and whether another node still holds a member. `RoomsService` conforms with the methods it already has
/// (RoomsService+ClusterAttachments.swift, +Cluster.swift), so the rules call them without knowing the service;
/// rooms thread only.
protocol MemberAttachments: AnyObject {
    /// Attaches the connection to the room as the member's; with several nodes, records that this node has one.
    func attach(_ client: ClientRef, to room: LiveRoom, member memberID: String, _ step: inout Step) throws
    /// The member's last connection here detached: away since `time` (unless another node holds it).
    func lastConnectionDetached(_ member: LiveMember, in room: LiveRoom, at time: Int64, _ step: inout Step) throws
    /// Whether an away member may drop (with several nodes: no other node has it attached).
    func clusterAllowsDrop(_ memberID: String, _ step: inout Step) throws -> Bool
}

/// What a room's rules leave to the media part: a member's audio state, and the media mode a session is told of.
/// `RoomsService` conforms with the methods it already has (RoomsService+Media.swift, +SFU.swift); rooms thread only.
protocol MemberMedia: AnyObject {
    /// Applies a media change and returns the event frame to broadcast, or nil when nothing changed.
    func applyMedia(_ change: MediaChange, to member: LiveMember, in room: LiveRoom, by: JSONValue?, _ step: inout Step) throws -> [UInt8]?
    /// session:success's `media`: the mode, and the slots with a forwarding unit.
    var mediaJSON: JSONValue { get }
}

extension RoomsService: MemberAttachments, MemberMedia {}
