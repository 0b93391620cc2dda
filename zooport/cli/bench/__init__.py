"""The adapter benchmark ``zooport bench`` runs, shipped so it works after a plain install."""
