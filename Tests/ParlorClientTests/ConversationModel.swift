import Observation
import ParlorClient

// The ConversationModel example of docs/clients.md, kept here so it compiles and runs (SwiftUI imports aside).

/// The tutorial's ConversationModel on ParlorClient: one room's participants, kept current by its events.
@MainActor @Observable
final class ConversationModel {
    struct Participant: Identifiable, Hashable {
        let id: String  // member id
        let name: String
    }

    let roomID: String
    private(set) var participants: [Participant] = []
    private(set) var isJoined = false
    private(set) var lastError: ParlorError?

    private let session: ParlorSession
    private var ownMemberID: String?
    /// The newest event reflected in `participants`: the join snapshot's, then each applied event's.
    private var lastEventID: Int64 = 0
    /// Events that arrive before the join reply has been applied; replayed on top of the snapshot.
    private var early: [RoomEvent] = []
    private var listeners: [Task<Void, Never>] = []

    init(session: ParlorSession, roomID: String) {
        self.session = session
        self.roomID = roomID
    }

    /// NXMConversationDelegate's conversation(_:didReceive:), and rejoining rooms lost while away.
    func listen() {
        let session = self.session
        listeners.append(Task { [weak self] in
            for await event in session.events {
                guard let self else { return }
                self.apply(event)
            }
        })
        listeners.append(Task { [weak self] in
            for await state in session.connectionStates {
                guard let self else { return }
                if case .resumed(_, _, let lost) = state, lost.contains(self.roomID) {
                    self.isJoined = false
                    await self.join()  // the membership ended while we were away: a new one, a new snapshot
                }
            }
        })
    }

    /// conversation.join + getMembersPage: the join reply lists the members as of its `lastEventID`.
    func join() async {
        do throws(ParlorError) {
            let membership = try await session.join(roomID)
            ownMemberID = membership.memberID
            participants = membership.members.map { Participant(id: $0.memberID, name: $0.user.name) }
            lastEventID = membership.lastEventID
            isJoined = true
            let buffered = early
            early = []
            buffered.forEach(apply)
        } catch {
            lastError = error
        }
    }

    func leave() async {
        do throws(ParlorError) {
            try await session.leave(roomID)
        } catch {
            lastError = error
        }
    }

    func stop() {
        listeners.forEach { $0.cancel() }
    }

    private func apply(_ event: RoomEvent) {
        guard event.roomID == roomID else { return }
        guard isJoined else {
            early.append(event)
            return
        }
        guard let id = event.id, id > lastEventID else { return }  // already in the snapshot
        lastEventID = id
        guard let memberID = event.memberID, let name = event.user?.name else { return }
        switch event.type {
        case .memberJoined:
            if !participants.contains(where: { $0.id == memberID }) {
                participants.append(Participant(id: memberID, name: name))
            }
        case .memberLeft:
            participants.removeAll { $0.id == memberID }
            if memberID == ownMemberID {
                isJoined = false
                participants = []
            }
        case .other:
            break
        }
    }
}
