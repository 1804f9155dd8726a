// ParlorClient: see docs/clients.md
