"""Makes a container and puts objects in an Azure Blob endpoint (Azurite in the tests), with
Azure's own Python client: `azure_blobs.py ENDPOINT ACCOUNT KEY CONTAINER [NAME=PATH ...]`
(ENDPOINT is the account URL, e.g. http://127.0.0.1:10000/devstoreaccount1)."""

import sys
from pathlib import Path

from azure.core.exceptions import ResourceExistsError
from azure.storage.blob import BlobServiceClient


def main():
    endpoint, account, key, container, *objects = sys.argv[1:]
    service = BlobServiceClient(account_url=endpoint,
                                credential={"account_name": account, "account_key": key})
    try:
        service.create_container(container)
    except ResourceExistsError:
        pass
    for spec in objects:
        name, path = spec.split("=", 1)
        service.get_blob_client(container, name).upload_blob(Path(path).read_bytes(), overwrite=True)


if __name__ == "__main__":
    main()
